// The calls of the stdio runtime to the host: messages.reply and messages.send (the transport of the
// contexts) and log.write.

package hostsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

func (rt *stdioRuntime) token() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.init == nil {
		return ""
	}
	return rt.init.Token
}

func (rt *stdioRuntime) requestTimeout() time.Duration {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.timeout
}

// stopCause is why every handler's context ends at plugin.stop: a sign to wrap up, not a cancellation of the
// event (spec 3.7: the plugin finishes the events in flight).
type stopCause struct{ reason string }

func (c *stopCause) Error() string { return "plugin.stop (" + c.reason + ")" }

// callContext is the context a call to the host waits under: ctx, unless what ended it is plugin.stop. A
// handler finishing its event after the stop still replies, sends and uploads, as in the other SDKs; the
// event's own cancellation (events.cancel, the handler deadline) and the caller's still abort the call.
func callContext(ctx context.Context) context.Context {
	var stop *stopCause
	if errors.As(context.Cause(ctx), &stop) {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// The transport side of the stdio runtime.

func (rt *stdioRuntime) kind() Transport { return TransportStdio }

// call is messages.reply or messages.send: it waits for the host's answer unless ctx (the handler's or
// the lifecycle's) ends first.
func (rt *stdioRuntime) call(ctx context.Context, method string, params any, target *wire.Target) (*wire.SendResult, error) {
	raw, err := rt.conn.request(callContext(ctx), method, params, rt.requestTimeout())
	if err != nil {
		return nil, hostRefusal(err, target)
	}
	var result wire.SendResult
	if err := decodeInto(raw, &result); err != nil {
		return nil, &HostCallError{Method: method, Code: wire.RPCInternalError, Message: "the host's answer is not a send result: " + err.Error()}
	}
	return &result, nil
}

func (rt *stdioRuntime) reply(ctx context.Context, event *wire.MessageEvent, message wire.OutgoingMessage, target wire.Target) (*wire.SendResult, error) {
	token := rt.token()
	if token == "" {
		return nil, sdkError(wire.ErrSDKNotInitialized, "messages.reply cannot be sent before host.initialize")
	}
	return rt.call(ctx, wire.MethodMessagesReply, wire.MessagesReplyParams{Token: token, EventID: event.EventID, Message: message}, &target)
}

func (rt *stdioRuntime) send(ctx context.Context, event *wire.MessageEvent, target wire.Target, message wire.OutgoingMessage) (*wire.SendResult, error) {
	token := rt.token()
	if token == "" {
		return nil, sdkError(wire.ErrSDKNotInitialized, "messages.send cannot be sent before host.initialize")
	}
	params := wire.MessagesSendParams{Token: token, Target: target, Message: message}
	if event != nil {
		params.EventID = event.EventID // the handler's event (v2.md 4.7)
	}
	return rt.call(ctx, wire.MethodMessagesSend, params, &target)
}

// log writes a line of the plugin's own (outside a handler): it names no event.
func (rt *stdioRuntime) log(level LogLevel, message string, fields map[string]any) {
	rt.logLine(level, message, fields, "")
}

// eventLogWriter writes the lines of one handler's Logger: every line names its event (log.write eventId,
// v2.md 4.5).
func (rt *stdioRuntime) eventLogWriter(eventID string) func(level LogLevel, message string, fields map[string]any) {
	return func(level LogLevel, message string, fields map[string]any) {
		rt.logLine(level, message, fields, eventID)
	}
}

// logLine sends a log.write, naming eventID unless it is empty; stderr takes it when the host cannot.
func (rt *stdioRuntime) logLine(level LogLevel, message string, fields map[string]any, eventID string) {
	line := fmt.Sprintf("[%s] %s", level, message)
	if len(fields) > 0 {
		if b, err := json.Marshal(fields); err == nil {
			line += " " + string(b)
		}
	}
	token := rt.token()
	if token == "" || rt.conn.isClosed() {
		rt.errorf("%s", line)
		return
	}
	select {
	case rt.logSlots <- struct{}{}:
	default:
		rt.errorf("%s", line) // too many log lines wait for the host: keep this one on stderr
		return
	}
	params := wire.LogWriteParams{Token: token, Level: string(level), Message: message, Fields: fields, EventID: eventID}
	sent := rt.conn.notify(wire.MethodLogWrite, params, rt.requestTimeout(), func(_ []byte, err error) {
		<-rt.logSlots
		if err != nil {
			rt.errorf("%s", line)
		}
	})
	if !sent {
		<-rt.logSlots
		rt.errorf("%s", line)
	}
}
