// The Go SDK side of the stdio benchmark: the same exchange as raw-child.mjs (the ACK, a Markdown reply
// mentioning the sender with the args, events.completed once the reply was answered), with hostsdk.
package main

import "plugin-host.dev/sdk-go/hostsdk"

func main() {
	plugin := hostsdk.MustLoad("manifest.json")
	plugin.Command("echo", func(ctx *hostsdk.Context) error {
		_, err := ctx.ReplyMarkdown(hostsdk.AtUser(ctx.Sender()), hostsdk.Text(" "+ctx.Args()))
		return err
	})
	plugin.Run()
}
