package hostsdk

import (
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// rawFile reads and writes a non-blocking pipe or socket of the host's stdio with raw system calls inside
// the runtime poller's wait (syscall.RawConn): a read that finds nothing returns at once (EAGAIN) and the
// goroutine parks on the poller as os.File would park it. os.File's own reads and writes go through
// syscall.Syscall, which tells the scheduler that the thread may block: when the process had been idle,
// the runtime's monitor thread sleeps and every such call wakes it (a futex wake and a context switch
// per read, measured at c=32 in the stdio benchmark), although a read of a non-blocking descriptor never
// blocks. The raw calls skip that bookkeeping.
//
// A read that finds the pipe empty does not park at once: for up to spinWindow it lets the other
// goroutines run (the handlers of what was just read, whose frames go out meanwhile) and peeks at the
// pipe with a zero-timeout ppoll, which, unlike a read, does not take the lock the host's writes take. A
// host answers what the plugin wrote within microseconds, and a plugin that has gone to sleep costs a
// wake-up on both sides; without the spin the host, the busier of the two, waited for the plugin about
// one exchange in four at 32 events in flight (context switches measured in the stdio benchmark). An
// idle plugin spins once, for spinWindow, after its last frame.
type rawFile struct {
	f  *os.File
	rc syscall.RawConn

	// The state of the call under way: the poller calls readFn/writeFn (allocated once) until they are done.
	rbuf            []byte
	rn              int
	rerr            error
	wbuf            []byte
	wn              int
	werr            error
	readFn, writeFn func(fd uintptr) bool

	parks atomic.Int64 // reads that found the pipe empty past spinWindow and waited on the poller (tests)
}

// spinWindow is how long a reader that found the pipe empty peeks at it before it waits on the poller.
const spinWindow = 100 * time.Microsecond

// rawPipe returns f (pollable already) read and written with raw system calls, or f when it has no raw
// descriptor.
func rawPipe(f *os.File) io.ReadWriter {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	r := &rawFile{f: f, rc: rc}
	r.readFn = r.read
	r.writeFn = r.write
	return r
}

func (r *rawFile) read(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.rbuf[0])), uintptr(len(r.rbuf)))
		switch errno {
		case 0:
			r.rn = int(n)
			if n == 0 {
				r.rerr = io.EOF
			}
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			if awaitData(fd) {
				continue
			}
			r.parks.Add(1)
			return false // nothing to read for a while: wait on the poller
		}
		r.rerr = &os.PathError{Op: "read", Path: r.f.Name(), Err: errno}
		return true
	}
}

// awaitData lets the other runnable goroutines go first and peeks at fd until it has something to read
// (or its writer is gone), for at most spinWindow. True when a read will not find it empty.
func awaitData(fd uintptr) bool {
	poll := struct {
		fd      int32
		events  int16
		revents int16
	}{fd: int32(fd), events: pollIn}
	var now syscall.Timespec // a zero timeout: ppoll only looks
	for start := time.Now(); time.Since(start) < spinWindow; {
		runtime.Gosched()
		n, _, errno := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&poll)), 1, uintptr(unsafe.Pointer(&now)), 0, 0, 0)
		if errno == 0 && n > 0 {
			return true // readable, hung up or failed: the read says which
		}
	}
	return false
}

// pollIn is POLLIN of poll(2).
const pollIn = 0x1

// Read reads what the pipe holds, waiting on the poller when it is empty; io.EOF at its end.
func (r *rawFile) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.rbuf, r.rn, r.rerr = b, 0, nil
	if err := r.rc.Read(r.readFn); err != nil {
		return 0, err
	}
	n, err := r.rn, r.rerr
	r.rbuf = nil
	return n, err
}

func (r *rawFile) write(fd uintptr) bool {
	for r.wn < len(r.wbuf) {
		rest := r.wbuf[r.wn:]
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch errno {
		case 0:
			r.wn += int(n)
			continue
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // the pipe is full: wait on the poller until the host reads
		}
		r.werr = &os.PathError{Op: "write", Path: r.f.Name(), Err: errno}
		return true
	}
	return true
}

// Write writes all of b, waiting on the poller while the pipe is full.
func (r *rawFile) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.wbuf, r.wn, r.werr = b, 0, nil
	err := r.rc.Write(r.writeFn)
	n := r.wn
	if err == nil {
		err = r.werr
	}
	r.wbuf = nil
	return n, err
}
