// Command host-pack builds a Go plugin for one platform and writes artifacts/<pluginId>-<goos>-<goarch>.zip,
// ready to upload to the host:
//
//	go run plugin-host.dev/sdk-go/cmd/host-pack -goos linux -goarch amd64
//
// The packaged manifest launches the executable (./<name>, or <name>.exe on Windows) with --host-stdio
// and lists only that platform and architecture, so the host refuses the package elsewhere
// (INSTALL_PLATFORM_UNSUPPORTED) instead of failing at start.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"

	"plugin-host.dev/sdk-go/hostsdk/pack"
)

func main() {
	var o pack.Options
	var include string
	flag.StringVar(&o.Dir, "dir", ".", "the plugin project (manifest.json and its main package)")
	flag.StringVar(&o.Package, "pkg", ".", "the main package, relative to -dir")
	flag.StringVar(&o.GOOS, "goos", runtime.GOOS, "target operating system: linux, windows or darwin")
	flag.StringVar(&o.GOARCH, "goarch", runtime.GOARCH, "target architecture: amd64, arm64 or 386")
	flag.StringVar(&o.Out, "out", "artifacts", "folder of the archive, relative to -dir")
	flag.StringVar(&o.Name, "name", "", "executable name (default: the last segment of the pluginId)")
	flag.StringVar(&include, "include", "", "comma-separated extra files to package (paths inside -dir)")
	flag.Parse()
	if include != "" {
		o.Include = strings.Split(include, ",")
	}
	o.Log = os.Stderr
	r, err := pack.Pack(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "host-pack:", err)
		os.Exit(1)
	}
	fmt.Println(r.Archive)
}
