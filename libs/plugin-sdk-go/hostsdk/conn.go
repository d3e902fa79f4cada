package hostsdk

import (
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"plugin-host.dev/sdk-go/hostsdk/wire"
)

// outboxFrames bounds the frames waiting for the writer; a plugin that writes faster than the host reads
// blocks instead of buffering without limit (docs/protocol/v2.md 3.6.1).
const outboxFrames = 256

type response struct {
	result json.RawMessage
	err    *rpcError
}

// conn is one JSON-RPC connection over a frame stream: a single writer goroutine owns the output, so
// frames never interleave; requests of both sides are multiplexed by id.
type conn struct {
	out        io.Writer
	outbox     chan []byte
	writerDone chan struct{}
	stopWriter chan struct{}

	stopOnce sync.Once

	// wmu guards the output: writing is true while one goroutine writes, queued counts frames in the
	// outbox not yet written.
	wmu     sync.Mutex
	wcond   *sync.Cond
	writing bool
	queued  int
	broken  atomic.Bool

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan response
	closed  bool
	done    chan struct{}
}

func newConn(out io.Writer) *conn {
	c := &conn{
		out:        out,
		outbox:     make(chan []byte, outboxFrames),
		writerDone: make(chan struct{}),
		stopWriter: make(chan struct{}),
		pending:    map[string]chan response{},
		done:       make(chan struct{}),
	}
	c.wcond = sync.NewCond(&c.wmu)
	go c.writer()
	return c
}

func (c *conn) writer() {
	defer close(c.writerDone)
	var batch []byte
	flush := func(n int) {
		c.wmu.Lock()
		for c.writing {
			c.wcond.Wait()
		}
		c.writing = true
		c.wmu.Unlock()
		if !c.broken.Load() {
			if _, err := c.out.Write(batch); err != nil {
				// The host is gone (EPIPE): drop what is left; the closed stdin ends the process.
				c.broken.Store(true)
			}
		}
		c.wmu.Lock()
		c.writing = false
		c.queued -= n
		c.wcond.Broadcast()
		c.wmu.Unlock()
	}
	// take adds the frames already waiting to the batch, so a burst costs one write.
	take := func(frame []byte) int {
		batch = append(batch[:0], frame...)
		n := 1
		for n < 64 {
			select {
			case more := <-c.outbox:
				batch = append(batch, more...)
				n++
			default:
				return n
			}
		}
		return n
	}
	for {
		select {
		case frame := <-c.outbox:
			flush(take(frame))
		case <-c.stopWriter:
			for {
				select {
				case frame := <-c.outbox:
					flush(take(frame))
				default:
					return
				}
			}
		}
	}
}

// send writes one frame: at once from the calling goroutine when nothing is queued or being written
// (the common case, saving a hand-off), else through the writer's queue, so frames keep their order
// and never interleave. False when the connection is closed.
func (c *conn) send(message any) bool {
	frame, err := encodeFrame(message)
	if err != nil {
		return false
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return false
	}
	c.wmu.Lock()
	if c.queued == 0 && !c.writing {
		c.writing = true
		c.wmu.Unlock()
		if !c.broken.Load() {
			if _, err := c.out.Write(frame); err != nil {
				c.broken.Store(true)
			}
		}
		c.wmu.Lock()
		c.writing = false
		c.wcond.Broadcast()
		c.wmu.Unlock()
		return true
	}
	c.queued++
	c.wmu.Unlock()
	select {
	case c.outbox <- frame:
		return true
	case <-c.done:
		c.wmu.Lock()
		c.queued--
		c.wmu.Unlock()
		return false
	}
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

// request sends a request and waits for its answer, the timeout, or the connection's end.
func (c *conn) request(method string, params any, timeout time.Duration) (json.RawMessage, error) {
	return c.start(method, params, timeout)()
}

// start queues the request frame now and returns a function that waits for its answer. Callers that
// must not lose the frame to a shutdown that follows (events.completed) queue it before going on.
func (c *conn) start(method string, params any, timeout time.Duration) func() (json.RawMessage, error) {
	disconnected := func() (json.RawMessage, error) {
		return nil, sdkError(wire.ErrSDKHostDisconnected, "%s cannot be sent: the connection to the host is closed", method)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return disconnected
	}
	c.nextID++
	id := c.nextID
	key := strconv.FormatInt(id, 10)
	ch := make(chan response, 1)
	c.pending[key] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
	}
	if !c.send(rpcRequestOut{JSONRPC: "2.0", ID: id, Method: method, Params: params}) {
		forget()
		return disconnected
	}
	return func() (json.RawMessage, error) {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case r := <-ch:
			if r.err != nil {
				return nil, &HostCallError{Method: method, Code: r.err.Code, Message: r.err.Message, Data: r.err.Data}
			}
			return r.result, nil
		case <-timer.C:
			forget()
			return nil, &HostCallError{Method: method, Code: wire.RPCRequestTimeout, Message: "the host did not answer within " + timeout.String()}
		case <-c.done:
			return nil, sdkError(wire.ErrSDKHostDisconnected, "%s did not finish: the connection to the host closed", method)
		}
	}
}

// deliver routes a response from the host to its waiting request; unknown ids are ignored.
func (c *conn) deliver(m *rpcMessage) {
	var key string
	var n int64
	if json.Unmarshal(m.ID, &n) == nil {
		key = strconv.FormatInt(n, 10)
	} else {
		return
	}
	c.mu.Lock()
	ch := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if ch != nil {
		ch <- response{result: m.Result, err: m.Error}
	}
}

func (c *conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// close fails every pending request and lets the writer finish the frames already queued.
func (c *conn) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.pending = map[string]chan response{}
	close(c.done)
	c.mu.Unlock()
}

// flush waits (bounded) until queued frames are written, then stops the writer.
func (c *conn) flush(limit time.Duration) {
	c.close()
	c.stopOnce.Do(func() { close(c.stopWriter) })
	select {
	case <-c.writerDone:
	case <-time.After(limit):
	}
}
