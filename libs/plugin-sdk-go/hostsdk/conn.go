package hostsdk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// maxQueuedBytes bounds the frames waiting to be written: a plugin that writes faster than the host reads
// waits instead of buffering without limit (docs/protocol/v2.md 3.6.1). A single larger frame (up to the
// payload limit) still goes out, alone.
const maxQueuedBytes = 1 << 20

type response struct {
	result   []byte // the JSON text of the result
	err      *rpcError
	timedOut bool // no answer within the request's timeout
}

// waiter is a request waiting for the host's answer: a channel for a caller that blocks, or a callback
// run on the reader goroutine for one that does not (events.completed, log.write), so no goroutine is
// parked per request.
type waiter struct {
	ch  chan response
	cb  func(response)
	due deadline // the timeout: delivers a timedOut response unless the answer came first
	c   *conn
	id  int64
}

// expire is the waiter's timeout.
func (w *waiter) expire() {
	if w.c.take(w.id) != nil {
		w.answer(response{timedOut: true})
	}
}

// conn is one JSON-RPC connection over a frame stream. Writing has one writer at a time: a sender appends
// its frame to the queue and, when nobody is writing, becomes the writer and writes everything queued in
// one Write per round, so frames never interleave, a burst costs one system call, and an idle connection
// writes at once without handing the frame to another goroutine. Requests of both sides are multiplexed
// by id.
type conn struct {
	out io.Writer

	// wmu guards the queue: queued holds whole frames in order, writing is true while one goroutine
	// writes, stopped when no more frames are taken.
	wmu     sync.Mutex
	wcond   *sync.Cond
	queued  []byte
	spare   []byte
	writing bool
	stopped bool // flushed: nothing more is written
	closing bool // closed: senders waiting for room give up
	broken  atomic.Bool

	mu      sync.Mutex
	nextID  int64
	pending map[int64]*waiter
	closed  bool
	done    chan struct{}

	timeouts *deadlines // of the requests waiting for an answer
}

// bodies are scratch buffers for encoding one frame before it joins the queue.
var bodies = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func newConn(out io.Writer) *conn {
	c := &conn{
		out:      out,
		pending:  map[int64]*waiter{},
		done:     make(chan struct{}),
		timeouts: newDeadlines(),
	}
	c.wcond = sync.NewCond(&c.wmu)
	return c
}

// send queues one frame and, when nobody is writing, writes the queue. False when the connection is
// closed or the frame cannot be encoded.
func (c *conn) send(message any) bool {
	scratch := bodies.Get().(*[]byte)
	defer func() {
		if cap(*scratch) <= 64<<10 {
			bodies.Put(scratch)
		}
	}()
	body, err := marshalMessage((*scratch)[:0], message)
	*scratch = body[:0]
	if err != nil {
		return false
	}
	var header [32]byte
	h := append(append(append(header[:0], "Content-Length: "...), strconv.Itoa(len(body))...), "\r\n\r\n"...)
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return false
	}
	c.wmu.Lock()
	for len(c.queued) > 0 && len(c.queued)+len(h)+len(body) > maxQueuedBytes && !c.stopped && !c.closing {
		c.wcond.Wait()
	}
	if c.stopped || (c.closing && len(c.queued) > 0 && len(c.queued)+len(h)+len(body) > maxQueuedBytes) {
		c.wmu.Unlock()
		return false
	}
	c.queued = append(append(c.queued, h...), body...)
	if c.writing {
		c.wmu.Unlock()
		return true
	}
	c.writing = true
	// Let goroutines that are ready to run go first: the frames they send meanwhile join this write
	// (with nothing else runnable this returns at once, so an idle connection loses no time).
	c.wmu.Unlock()
	runtime.Gosched()
	c.wmu.Lock()
	for len(c.queued) > 0 {
		batch := c.queued
		c.queued = c.spare[:0]
		c.wmu.Unlock()
		if !c.broken.Load() {
			if _, err := c.out.Write(batch); err != nil {
				// The host is gone (EPIPE): drop what is left; the closed stdin ends the process.
				c.broken.Store(true)
			}
		}
		c.wmu.Lock()
		if cap(batch) <= 2*maxQueuedBytes {
			c.spare = batch[:0]
		} else {
			c.spare = nil
		}
		c.wcond.Broadcast()
	}
	c.writing = false
	c.wcond.Broadcast()
	c.wmu.Unlock()
	return true
}

type rpcResponseOut struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type rpcErrorOut struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorBody    `json:"error"`
}

type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type rpcRequestOut struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

func (c *conn) respond(id json.RawMessage, result any) {
	c.send(rpcResponseOut{JSONRPC: "2.0", ID: id, Result: result})
}

func (c *conn) respondError(id json.RawMessage, code int, message string, data any) {
	if id == nil {
		id = json.RawMessage("null")
	}
	c.send(rpcErrorOut{JSONRPC: "2.0", ID: id, Error: rpcErrorBody{Code: code, Message: message, Data: data}})
}

// request sends a request and waits for its answer, the timeout, the connection's end, or the end of
// ctx (the caller's: a handler's context ends when its event is cancelled or the plugin stops). A request
// whose ctx has ended already is not sent; one abandoned while it waits leaves the host's late answer
// unread (no waiter takes it).
func (c *conn) request(ctx context.Context, method string, params any, timeout time.Duration) ([]byte, error) {
	if ctx.Err() != nil {
		return nil, abandonedError(ctx, method)
	}
	w := &waiter{ch: make(chan response, 1)}
	id, ok := c.register(w, timeout)
	if !ok || !c.send(rpcRequestOut{JSONRPC: "2.0", ID: id, Method: method, Params: params}) {
		c.take(id)
		return nil, disconnectedError(method)
	}
	return c.wait(ctx, method, timeout, w)
}

// abandonedError is a call to the host given up because its context ended first: an *SDKError
// SDK_EVENT_CANCELLED that names the context's cause and wraps ctx.Err(), so errors.Is(err,
// context.Canceled) (or context.DeadlineExceeded) holds and IsCancelled(err) is true.
func abandonedError(ctx context.Context, method string) error {
	why := context.Cause(ctx).Error()
	if se, ok := context.Cause(ctx).(*SDKError); ok && se.Detail != "" {
		why = se.Detail // the code and its help follow once, in this error's own text
	}
	return &SDKError{
		Code:   wire.ErrSDKEventCancelled,
		Detail: fmt.Sprintf("%s was abandoned: its context ended (%s)", method, why),
		Err:    ctx.Err(),
	}
}

func disconnectedError(method string) error {
	return sdkError(wire.ErrSDKHostDisconnected, "%s cannot be sent: the connection to the host is closed", method)
}

func answerOf(method string, timeout time.Duration, r response) ([]byte, error) {
	if r.timedOut {
		return nil, &HostCallError{Method: method, Code: wire.RPCRequestTimeout, Message: "the host did not answer within " + timeout.String()}
	}
	if r.err != nil {
		return nil, &HostCallError{Method: method, Code: r.err.Code, Message: r.err.Message, Data: r.err.Data}
	}
	return r.result, nil
}

// register adds a waiter, counts its timeout from now, and returns its id; false when the connection is
// closed. At the timeout the waiter gets a timedOut response unless the answer came first.
func (c *conn) register(w *waiter, timeout time.Duration) (int64, bool) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, false
	}
	c.nextID++
	id := c.nextID
	w.c, w.id, w.due.owner = c, id, w
	c.pending[id] = w
	c.mu.Unlock()
	c.timeouts.add(&w.due, timeout)
	return id, true
}

// answer hands the waiter its one response: to the blocked caller, or to its callback.
func (w *waiter) answer(r response) {
	if w.cb != nil {
		w.cb(r)
		return
	}
	w.ch <- r
}

// take removes and returns the waiter of id (nil when it was answered, timed out or closed already) and
// stops its timeout.
func (c *conn) take(id int64) *waiter {
	c.mu.Lock()
	w := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if w != nil {
		c.timeouts.stop(&w.due)
	}
	return w
}

// wait waits for the answer of w's request, its timeout, the connection's end, or the end of ctx.
func (c *conn) wait(ctx context.Context, method string, timeout time.Duration, w *waiter) ([]byte, error) {
	select {
	case r := <-w.ch:
		return answerOf(method, timeout, r)
	case <-c.done:
		return nil, sdkError(wire.ErrSDKHostDisconnected, "%s did not finish: the connection to the host closed", method)
	case <-ctx.Done():
		if c.take(w.id) == nil {
			// The answer (or the timeout) took the waiter at the same moment: it is in the channel.
			select {
			case r := <-w.ch:
				return answerOf(method, timeout, r)
			default:
			}
		}
		return nil, abandonedError(ctx, method)
	}
}

// notify sends a request whose answer only matters when it fails: done runs once, on the reader goroutine
// with the answer, on a timer at the timeout, or not at all when the connection closes first. Nothing
// waits in between.
func (c *conn) notify(method string, params any, timeout time.Duration, done func([]byte, error)) bool {
	w := &waiter{cb: func(r response) { done(answerOf(method, timeout, r)) }}
	id, ok := c.register(w, timeout)
	if !ok {
		return false
	}
	if !c.send(rpcRequestOut{JSONRPC: "2.0", ID: id, Method: method, Params: params}) {
		c.take(id)
		return false
	}
	return true
}

// deliver routes a response from the host to its waiting request; unknown ids are ignored.
func (c *conn) deliver(m *rpcMessage) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		return
	}
	if w := c.take(id); w != nil {
		w.answer(response{result: m.Result, err: m.Error})
	}
}

func (c *conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// close fails every pending request (waiting callers and callbacks); frames already queued are still written (flush waits for them).
func (c *conn) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	var callbacks []func(response)
	for _, w := range c.pending {
		c.timeouts.stop(&w.due)
		if w.cb != nil {
			callbacks = append(callbacks, w.cb)
		}
	}
	c.pending = map[int64]*waiter{}
	close(c.done)
	c.mu.Unlock()
	// Requests nobody waits for learn of the end too (a log line then goes to stderr).
	gone := response{err: &rpcError{Code: wire.RPCInternalError, Message: "the connection to the host closed before the answer"}}
	for _, cb := range callbacks {
		cb(gone)
	}
	c.wmu.Lock()
	c.closing = true
	c.wcond.Broadcast()
	c.wmu.Unlock()
}

// flush closes the connection and waits (bounded) until the queued frames are written.
func (c *conn) flush(limit time.Duration) {
	c.close()
	written := make(chan struct{})
	go func() {
		c.wmu.Lock()
		for c.writing || len(c.queued) > 0 {
			c.wcond.Wait()
		}
		c.stopped = true
		c.wcond.Broadcast()
		c.wmu.Unlock()
		close(written)
	}()
	select {
	case <-written:
	case <-time.After(limit):
		c.wmu.Lock()
		c.stopped = true
		c.wcond.Broadcast()
		c.wmu.Unlock()
	}
}
