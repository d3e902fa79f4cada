package hostsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/hostsdktest"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// abandoned checks the error of a call to the host given up because its context ended: an *SDKError
// SDK_EVENT_CANCELLED that wraps context.Canceled.
func abandoned(t *testing.T, err error) {
	t.Helper()
	var se *hostsdk.SDKError
	if !errors.As(err, &se) || se.Code != wire.ErrSDKEventCancelled {
		t.Fatalf("want an SDKError %s, got %v", wire.ErrSDKEventCancelled, err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v does not wrap context.Canceled", err)
	}
	if !errors.Is(err, &hostsdk.SDKError{Code: wire.ErrSDKEventCancelled}) || !hostsdk.IsCancelled(err) {
		t.Fatalf("%v is not recognised as a cancellation", err)
	}
}

// A reply the host has not answered yet returns as soon as the handler's context ends (here at the
// handler deadline), instead of waiting for the host's answer or the request timeout.
func TestAPendingReplyReturnsWhenTheHandlersContextEnds(t *testing.T) {
	p := hostsdk.MustLoad("testdata/manifest.json")
	replied := make(chan error, 1)
	p.Command("slow", func(ctx *hostsdk.Context) error {
		_, err := ctx.Reply(hostsdk.Text("late"))
		replied <- err
		return err
	})
	release := make(chan struct{})
	held := make(chan struct{}, 1)
	h := hostsdktest.Start(t, p, hostsdktest.Options{
		HandlerDeadline: 100 * time.Millisecond,
		RequestTimeout:  time.Minute,
		Refuse: func(method string, _ json.RawMessage) *hostsdktest.RPCError {
			if method == wire.MethodMessagesReply {
				held <- struct{}{}
				<-release // the host holds its answer until the test has the handler's error
			}
			return nil
		},
	})
	d := h.Deliver(h.Event(hostsdktest.Message{Text: "/slow"}))
	<-held
	var err error
	select {
	case err = <-replied:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("Reply still waits for the host after the handler's context ended")
	}
	close(release)
	abandoned(t, err)
	// The error names the method and why its context ended, with the code once.
	if msg := err.Error(); !strings.Contains(msg, "messages.reply") || !strings.Contains(msg, "(deadline)") || strings.Count(msg, wire.ErrSDKEventCancelled) != 1 {
		t.Fatalf("error text %q", msg)
	}
	if h.WaitCompleted(d); d.Completion == nil || d.Completion.Error == nil || d.Completion.Error.Code != wire.ErrSDKEventCancelled {
		t.Fatalf("completion %+v", d.Completion)
	}
}

// After events.cancel a reply or a send is not sent at all: it fails at once with the cancellation.
func TestRepliesAndSendsAfterTheEventWasCancelledAreNotSent(t *testing.T) {
	p, err := hostsdk.New("com.example.cancelled")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	errs := make(chan error, 2)
	p.OnMessage(func(ctx *hostsdk.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		_, err := ctx.Reply(hostsdk.Text("too late"))
		errs <- err
		_, err = ctx.Group("g-other").Send(hostsdk.Text("too late"))
		errs <- err
		return nil
	})
	h := hostsdktest.Start(t, p, hostsdktest.Options{})
	d := h.Deliver(h.Event(hostsdktest.Message{Text: "hello"}))
	<-started
	if !h.Cancel(d.Event.EventID, "ackTimeout") {
		t.Fatal("cancel of a running event answered false")
	}
	abandoned(t, <-errs)
	abandoned(t, <-errs)
	h.WaitCompleted(d)
	if replies := h.Replies(); len(replies) != 0 {
		t.Fatalf("the host received %+v", replies)
	}
}
