package hostsdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// A request the host never answers fails with RequestTimeout after its timeout, for a caller that waits
// and for a callback; an answer that comes later is dropped; answers in time are delivered once.
func TestRequestTimeoutsAndLateAnswers(t *testing.T) {
	c := newConn(io.Discard)
	began := time.Now()
	_, err := c.request(context.Background(), "messages.reply", map[string]any{}, 50*time.Millisecond)
	var hc *HostCallError
	if !errors.As(err, &hc) || hc.Code != wire.RPCRequestTimeout || hc.Method != "messages.reply" {
		t.Fatalf("unanswered request: %v", err)
	}
	if waited := time.Since(began); waited < 50*time.Millisecond {
		t.Fatalf("the timeout came after %v, before its 50ms", waited)
	}
	// The late answer (id 1) finds nobody.
	c.deliver(&rpcMessage{ID: []byte("1"), Result: []byte("{}")})

	callbacks := make(chan error, 4)
	if !c.notify("events.completed", map[string]any{}, 30*time.Millisecond, func(_ []byte, err error) { callbacks <- err }) {
		t.Fatal("notify refused on an open connection")
	}
	select {
	case err := <-callbacks:
		if !errors.As(err, &hc) || hc.Code != wire.RPCRequestTimeout {
			t.Fatalf("unanswered notify: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the notify's timeout never came")
	}
	c.deliver(&rpcMessage{ID: []byte("2"), Result: []byte("{}")})

	// Answered in time: the callback runs once with the answer and the timeout never fires.
	c.notify("log.write", map[string]any{}, 40*time.Millisecond, func(result []byte, err error) {
		if err != nil || string(result) != `{"accepted":true}` {
			callbacks <- errors.New("wrong answer")
		}
		callbacks <- nil
	})
	c.deliver(&rpcMessage{ID: []byte("3"), Result: []byte(`{"accepted":true}`)})
	if err := <-callbacks; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-callbacks:
		t.Fatalf("the callback ran again: %v", err)
	case <-time.After(100 * time.Millisecond):
	}

	// Closing fails what still waits.
	waited := make(chan error, 1)
	go func() {
		_, err := c.request(context.Background(), "messages.send", map[string]any{}, time.Minute)
		waited <- err
	}()
	for registered := false; !registered; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		registered = len(c.pending) > 0
		c.mu.Unlock()
	}
	c.close()
	if err := <-waited; err == nil {
		t.Fatal("a request waiting when the connection closed did not fail")
	}
	if c.timeouts.first != nil {
		t.Fatal("timeouts are left after every request ended")
	}
}

// writeFunc is an io.Writer that runs a function on every write.
type writeFunc func([]byte)

func (f writeFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

// A request whose context ends while it waits returns at once with the cancellation (wrapping ctx.Err());
// its waiter is gone, so the host's late answer is dropped; a request whose context has ended is not sent.
func TestARequestIsAbandonedWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	writes := 0
	c := newConn(writeFunc(func([]byte) {
		writes++
		cancel(errors.New("the event was cancelled")) // the frame is out: the context ends before any answer
	}))
	_, err := c.request(ctx, "messages.reply", map[string]any{}, time.Minute)
	var se *SDKError
	if !errors.As(err, &se) || se.Code != wire.ErrSDKEventCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned request: %v", err)
	}
	if !strings.Contains(err.Error(), "the event was cancelled") {
		t.Fatalf("the error does not name the cause: %v", err)
	}
	c.mu.Lock()
	pending := len(c.pending)
	c.mu.Unlock()
	if pending != 0 || c.timeouts.first != nil {
		t.Fatalf("the abandoned request still waits (%d pending)", pending)
	}
	c.deliver(&rpcMessage{ID: []byte("1"), Result: []byte("{}")}) // the late answer finds nobody
	if _, err := c.request(ctx, "messages.send", map[string]any{}, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("request with an ended context: %v", err)
	}
	if writes != 1 {
		t.Fatalf("%d frames written, want only the first request's", writes)
	}
}

// SDKError matches by code in errors.Is, through wrapping, and unwraps to the error it wraps.
func TestSDKErrorIsMatchesByCode(t *testing.T) {
	err := fmt.Errorf("handler: %w", sdkError(wire.ErrSDKNotInitialized, "too early"))
	if !errors.Is(err, &SDKError{Code: wire.ErrSDKNotInitialized}) {
		t.Fatal("errors.Is by code failed through wrapping")
	}
	if errors.Is(err, &SDKError{Code: wire.ErrSDKEventCancelled}) || errors.Is(err, &SDKError{}) {
		t.Fatal("errors.Is matched another code or an empty one")
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal("an SDKError that wraps nothing matched context.Canceled")
	}
	wrapped := &SDKError{Code: wire.ErrSDKEventCancelled, Err: context.DeadlineExceeded}
	if !errors.Is(wrapped, context.DeadlineExceeded) || errors.Unwrap(wrapped) != context.DeadlineExceeded {
		t.Fatal("SDKError does not unwrap to Err")
	}
}
