// Command echo is a sample protocol v2 plugin: /echo <text> answers in Markdown, mentioning the sender.
package main

import "plugin-host.dev/sdk-go/hostsdk"

// newPlugin defines the plugin; main runs it and main_test.go drives it with the SDK's test host.
func newPlugin() *hostsdk.Plugin {
	plugin := hostsdk.MustLoad("manifest.json")
	plugin.Command("echo", func(ctx *hostsdk.Context) error {
		if ctx.Event().Conversation.Type != "group" {
			_, err := ctx.Reply(hostsdk.Text("you said: "), hostsdk.Text(ctx.Args()))
			return err
		}
		_, err := ctx.ReplyMarkdown(hostsdk.AtUser(ctx.Sender()), hostsdk.Text(" said **"), hostsdk.Literal(ctx.Args()), hostsdk.Text("**"))
		return err
	})
	return plugin
}

func main() {
	newPlugin().Run()
}
