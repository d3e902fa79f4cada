package hostsdk

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// The host's pipes are read and written with raw system calls: a write larger than the pipe waits for the
// reader, every byte arrives in order, the end of the stream is io.EOF, and a write after the reader is
// gone fails with EPIPE instead of blocking.
func TestRawPipesCarryEveryByteThenEOFAndEPIPE(t *testing.T) {
	r, w := blockingPipe(t)
	in, out := stdioPipe(r), stdioPipe(w)
	if _, ok := in.(*rawFile); !ok {
		t.Fatalf("a pipe is read through %T, not the raw reader", in)
	}
	if _, ok := out.(*rawFile); !ok {
		t.Fatalf("a pipe is written through %T, not the raw writer", out)
	}
	sent := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, sixteen times a pipe's buffer
	wrote := make(chan error, 1)
	go func() {
		n, err := out.Write(sent)
		if err == nil && n != len(sent) {
			err = io.ErrShortWrite
		}
		wrote <- err
		w.Close()
	}()
	got, err := io.ReadAll(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent) {
		t.Fatalf("read %d bytes, not the %d written in order", len(got), len(sent))
	}
	if n, err := in.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("after the end: %d, %v; want 0, io.EOF", n, err)
	}
	r.Close()

	r2, w2 := blockingPipe(t)
	out2 := stdioPipe(w2)
	r2.Close()
	if _, err := out2.Write([]byte("frame")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("a write without a reader: %v, want EPIPE", err)
	}
	w2.Close()
}

// blockingPipe is a pipe as a process inherits it on stdin or stdout: blocking descriptors the runtime
// does not poll yet (os.Pipe's are registered with the poller already).
func blockingPipe(t *testing.T) (*os.File, *os.File) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "pipe-r"), os.NewFile(uintptr(fds[1]), "pipe-w")
}

// A reader that finds the pipe empty peeks at it for a moment, then waits on the poller: an idle plugin
// does not keep spinning, and data written before and after it parked is read all the same.
func TestRawPipeReaderParksWhenIdleAndWakesForData(t *testing.T) {
	r, w := blockingPipe(t)
	defer r.Close()
	in, out := stdioPipe(r).(*rawFile), stdioPipe(w)
	read := func() chan string {
		got := make(chan string, 1)
		go func() {
			b := make([]byte, 16)
			n, err := in.Read(b)
			if err != nil {
				got <- err.Error()
				return
			}
			got <- string(b[:n])
		}()
		return got
	}

	// Written while the reader may still be spinning.
	got := read()
	if _, err := out.Write([]byte("soon")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "soon" {
		t.Fatalf("read %q, want soon", s)
	}

	// Nothing written: the reader parks (counted once it gave up peeking).
	got = read()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if in.parks.Load() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a reader of an empty pipe never waited on the poller")
		}
	}
	if _, err := out.Write([]byte("later")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "later" {
		t.Fatalf("read %q, want later", s)
	}
	w.Close()
	if n, err := in.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("after the end: %d, %v; want 0, io.EOF", n, err)
	}
}
