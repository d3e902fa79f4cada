package main

import (
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk/hostsdktest"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// The sample, driven through its real stdio runtime by the SDK's test host.
func TestEchoAnswersGroupsInMarkdownAndOneToOneChatsInText(t *testing.T) {
	host := hostsdktest.Start(t, newPlugin(), hostsdktest.Options{})
	group := host.Send(hostsdktest.Message{Text: "/echo *hi*"})
	if group.Completion == nil || group.Completion.Error != nil {
		t.Fatalf("completion %+v", group.Completion)
	}
	r := host.RepliesTo(group.Event.EventID)
	if len(r) != 1 || r[0].Format != "markdown" || r[0].Text() != "@test-user said: ***hi***" {
		t.Fatalf("group replies %+v", r)
	}
	// The user's text is a literal: the host escapes its Markdown instead of posting it.
	if text, ok := r[0].Parts[2].(wire.MessagePartText); !ok || !text.Literal {
		t.Fatalf("the user's text is not a literal: %#v", r[0].Parts[2])
	}
	direct := host.Send(hostsdktest.Message{Text: "/echo hi", Conversation: "c2c"})
	if r := host.RepliesTo(direct.Event.EventID); len(r) != 1 || r[0].Format != "text" || r[0].Text() != "You said: hi" {
		t.Fatalf("one-to-one replies %+v", r)
	}
}
