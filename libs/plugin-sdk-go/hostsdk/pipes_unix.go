//go:build unix

package hostsdk

import (
	"io"
	"os"
	"syscall"
)

// pollable returns f as a file the Go runtime waits on with its poller when it is a pipe or a socket
// (the host's stdio): reads and writes then park the goroutine instead of blocking an OS thread in a
// system call, so a handler woken by a frame runs at once instead of waiting until the scheduler takes
// the reader's processor back. Anything else (a terminal, a file) is returned as it is. The new file is
// kept for the life of the process (it shares the descriptor with os.Stdin or the original os.Stdout).
func pollable(f *os.File) *os.File {
	fd := int(f.Fd())
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return f
	}
	if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFIFO && kind != syscall.S_IFSOCK {
		return f
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return f
	}
	p := os.NewFile(uintptr(fd), f.Name())
	keptFiles = append(keptFiles, p)
	return p
}

var keptFiles []*os.File

// stdioPipe is one of the host's stdio streams as the runtime uses it: pollable when it is a pipe or a
// socket, and then read and written with raw system calls where the platform allows (rawpipe_linux.go).
func stdioPipe(f *os.File) io.ReadWriter {
	p := pollable(f)
	if p == f {
		return f
	}
	return rawPipe(p)
}
