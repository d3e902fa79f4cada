// The Go SDK side of the stdio benchmark: the same exchange as raw-child.mjs (the ACK, a Markdown reply
// mentioning the sender with the args, events.completed once the reply was answered), with hostsdk.
// With GO_SDK_BENCH_CPUPROFILE=<file> it writes a CPU profile of the run (go tool pprof <exe> <file>).
package main

import (
	"os"
	"runtime/pprof"

	"plugin-host.dev/sdk-go/v2/hostsdk"
)

func main() {
	plugin := hostsdk.MustLoad("manifest.json")
	plugin.Command("echo", func(ctx *hostsdk.Context) error {
		_, err := ctx.ReplyMarkdown(hostsdk.AtUser(ctx.Sender()), hostsdk.Text(" "+ctx.Args()))
		return err
	})
	if path := os.Getenv("GO_SDK_BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			plugin.OnStop(func(*hostsdk.Lifecycle) error {
				pprof.StopCPUProfile()
				return f.Close()
			})
		}
	}
	plugin.Run()
}
