package hostsdk

import (
	"encoding/json"
	"errors"
	"fmt"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// SDKError is a local error of the SDK with a stable SDK_* code (wire.SDKErrorCodes): a mistake in how
// the plugin uses the SDK, or a condition of its own process. It never crosses the wire.
type SDKError struct {
	Code   string
	Detail string
	// Issues lists every problem of an invalid manifest (SDK_MANIFEST_INVALID) as {code, path, message}.
	Issues []Issue
	// Err is the error this one wraps, if any: ctx.Err() for a call to the host abandoned because its
	// context ended (SDK_EVENT_CANCELLED), so errors.Is(err, context.Canceled) holds.
	Err error
}

// Issue is one validation problem: a catalogued code, the path of the field and what to do.
type Issue struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (e *SDKError) Error() string {
	entry, _ := wire.LookupError(e.Code)
	if e.Detail == "" {
		return e.Code + ": " + entry.Message
	}
	return fmt.Sprintf("%s (%s: %s)", e.Detail, e.Code, entry.Message)
}

// Unwrap is the wrapped error (Err), or nil.
func (e *SDKError) Unwrap() error { return e.Err }

// Is reports whether target is an *SDKError with the same Code, so a check by code reads
//
//	errors.Is(err, &hostsdk.SDKError{Code: wire.ErrSDKEventCancelled})
//
// and works through any wrapping. A target without a Code matches no error.
func (e *SDKError) Is(target error) bool {
	t, ok := target.(*SDKError)
	return ok && t.Code != "" && t.Code == e.Code
}

func sdkError(code, format string, args ...any) *SDKError {
	return &SDKError{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// MessageError is a refused message: by the SDK's own checks before sending (the rules the host applies)
// or by the host. Code is a message.* code of the error catalogue (wire.CodeMessage...).
type MessageError struct {
	Code    string
	Message string
	// Target is where the message was going, when known.
	Target *wire.Target
	// FromHost is true when the host refused it, false when the SDK's checks did.
	FromHost bool
}

func (e *MessageError) Error() string { return e.Code + ": " + e.Message }

func messageError(code string, target *wire.Target, message string) *MessageError {
	if message == "" {
		entry, _ := wire.LookupError(code)
		message = entry.Message
	}
	return &MessageError{Code: code, Message: message, Target: target}
}

// HostCallError is a request the plugin made to the host (log.write, messages.reply, messages.send,
// events.completed) that failed with a JSON-RPC error, or timed out (Code wire.RPCRequestTimeout).
type HostCallError struct {
	Method  string
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *HostCallError) Error() string {
	for _, c := range wire.RPCCodes {
		if c.Code == e.Code {
			return fmt.Sprintf("%s failed: %s (%d %s: %s)", e.Method, e.Message, e.Code, c.Name, c.Help)
		}
	}
	return fmt.Sprintf("%s failed: %s (%d)", e.Method, e.Message, e.Code)
}

// HandlerError is returned from a handler to report a failure with the plugin's own stable code
// (1 to 100 characters, e.g. "weather.api_unavailable"). Any other error is reported with code
// plugin.handler_failed.
type HandlerError struct {
	Code    string
	Message string
	Details any
}

func (e *HandlerError) Error() string { return e.Code + ": " + e.Message }

// NewHandlerError builds a HandlerError.
func NewHandlerError(code, message string, details any) *HandlerError {
	return &HandlerError{Code: code, Message: message, Details: details}
}

// toPluginError is the {code, message, details} the host records for a handler's error.
func toPluginError(err error) *wire.PluginError {
	clipRunes := func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		return string(r[:n-3]) + "..."
	}
	var he *HandlerError
	var me *MessageError
	var se *SDKError
	switch {
	case errors.As(err, &he):
		code := he.Code
		if code == "" {
			code = wire.CodePluginHandlerFailed
		}
		return &wire.PluginError{Code: clipRunes(code, 100), Message: clipRunes(he.Message, 2000), Details: he.Details}
	case errors.As(err, &me):
		return &wire.PluginError{Code: me.Code, Message: clipRunes(me.Message, 2000)}
	case errors.As(err, &se):
		return &wire.PluginError{Code: se.Code, Message: clipRunes(se.Error(), 2000)}
	}
	msg := err.Error()
	if msg == "" {
		msg = "the handler failed"
	}
	return &wire.PluginError{Code: wire.CodePluginHandlerFailed, Message: clipRunes(msg, 2000)}
}
