//go:build !unix

package hostsdk

import (
	"io"
	"os"
)

// pollable returns f unchanged where the runtime's poller does not serve pipes (Windows).
func pollable(f *os.File) *os.File { return f }

// stdioPipe is f where the runtime's poller does not serve pipes.
func stdioPipe(f *os.File) io.ReadWriter { return f }
