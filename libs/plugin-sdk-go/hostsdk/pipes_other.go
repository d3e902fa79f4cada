//go:build !unix

package hostsdk

import "os"

// pollable returns f unchanged where the runtime's poller does not serve pipes (Windows).
func pollable(f *os.File) *os.File { return f }
