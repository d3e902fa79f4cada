package hostsdk

import (
	"errors"
	"io"
	"testing"
	"time"

	"plugin-host.dev/sdk-go/hostsdk/wire"
)

// A request the host never answers fails with RequestTimeout after its timeout, for a caller that waits
// and for a callback; an answer that comes later is dropped; answers in time are delivered once.
func TestRequestTimeoutsAndLateAnswers(t *testing.T) {
	c := newConn(io.Discard)
	began := time.Now()
	_, err := c.request("messages.reply", map[string]any{}, 50*time.Millisecond)
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
		_, err := c.request("messages.send", map[string]any{}, time.Minute)
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
