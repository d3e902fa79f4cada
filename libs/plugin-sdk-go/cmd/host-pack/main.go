// Command host-pack builds a Go plugin for one platform and writes artifacts/<pluginId>-<goos>-<goarch>.zip,
// ready to upload to the host:
//
//	go run plugin-host.dev/sdk-go/v2/cmd/host-pack -goos linux -goarch amd64
//
// The packaged manifest launches the executable (./<name>, or <name>.exe on Windows) with --host-stdio
// and lists only that platform and architecture, so the host refuses the package elsewhere
// (INSTALL_PLATFORM_UNSUPPORTED) instead of failing at start.
//
// A refusal prints `error CODE: what happened` and the fix, with the packaging codes every packer shares
// (docs/protocol/v2.md section 11.5), and exits 1 (2 for a command line that is not valid).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"plugin-host.dev/sdk-go/v2/hostsdk/pack"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var o pack.Options
	var include string
	flags := flag.NewFlagSet("host-pack", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&o.Dir, "dir", ".", "the plugin project (manifest.json and its main package)")
	flags.StringVar(&o.Package, "pkg", ".", "the main package, relative to -dir")
	flags.StringVar(&o.GOOS, "goos", runtime.GOOS, "target operating system: linux, windows or darwin")
	flags.StringVar(&o.GOARCH, "goarch", runtime.GOARCH, "target architecture: amd64, arm64 or 386")
	flags.StringVar(&o.Out, "out", "artifacts", "folder of the archive, relative to -dir")
	flags.StringVar(&o.Name, "name", "", "executable name (default: the last segment of the pluginId)")
	flags.StringVar(&include, "include", "", "comma-separated extra files to package (paths inside -dir)")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, (&pack.Error{Code: wire.ErrPackUsage, Detail: err.Error()}).Render())
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintln(stderr, (&pack.Error{Code: wire.ErrPackUsage, Detail: "unexpected argument " + flags.Arg(0) + " (the project is -dir)"}).Render())
		return 2
	}
	if include != "" {
		o.Include = strings.Split(include, ",")
	}
	o.Log = stderr
	r, err := pack.Pack(o)
	if err != nil {
		var e *pack.Error
		if errors.As(err, &e) {
			fmt.Fprintln(stderr, e.Render())
		} else {
			fmt.Fprintln(stderr, "host-pack:", err)
		}
		return 1
	}
	fmt.Fprintln(stdout, r.Archive)
	return 0
}
