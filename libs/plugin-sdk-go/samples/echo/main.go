// Command echo is a sample protocol v2 plugin: /echo <text> answers in Markdown, mentioning the sender.
package main

import "plugin-host.dev/sdk-go/v2/hostsdk"

// newPlugin defines the plugin; main runs it and main_test.go drives it with the SDK's test host.
func newPlugin() *hostsdk.Plugin {
	plugin := hostsdk.MustLoad("manifest.json")
	plugin.Command("echo", func(ctx *hostsdk.Context) error {
		// "/echo hello" -> a Markdown reply that mentions the sender (groups only; one-to-one chats get
		// plain text). Literal shows the user's text as written: Markdown in it is escaped, not posted.
		text := ctx.Args()
		if text == "" {
			text = "nothing"
		}
		if ctx.Event().Conversation.Type == "group" {
			_, err := ctx.ReplyMarkdown(hostsdk.AtUser(ctx.Sender()), hostsdk.Text(" said: **"), hostsdk.Literal(text), hostsdk.Text("**"))
			return err
		}
		_, err := ctx.Reply(hostsdk.Text("You said: "), hostsdk.Text(text))
		return err
	})
	return plugin
}

func main() {
	newPlugin().Run()
}
