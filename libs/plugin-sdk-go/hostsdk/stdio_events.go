// The event runner of the stdio runtime: admission of events.message and events.deliver (limits, queue
// until OnStart, duplicates), the handler goroutines, the ACK and events.completed, events.cancel and
// the handler deadline.

package hostsdk

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

type eventTask struct {
	reqID   json.RawMessage
	event   *wire.MessageEvent
	handler Handler
	ctx     *Context
	cancel  context.CancelCauseFunc
	due     deadline // the handler deadline
	started bool
	rt      *stdioRuntime
}

// expire is the handler deadline: the SDK cancels the handler's context itself.
func (t *eventTask) expire() { t.rt.cancel(t.event.EventID, "deadline") }

func (rt *stdioRuntime) onEvent(m *rpcMessage) {
	rt.mu.Lock()
	stopping := rt.stopping
	rt.mu.Unlock()
	if stopping {
		rt.conn.respondError(m.ID, wire.RPCStopping, "the plugin is stopping and takes no new events", nil)
		return
	}
	var event wire.MessageEvent
	var handler Handler
	if m.Method == wire.MethodEventsDeliver {
		var chat wire.ChatEvent
		if issues := decodeParams(m, &chat); issues != nil {
			rt.invalidParams(m, issues)
			return
		}
		var envelope *wire.MessageEvent
		if handler, envelope = rt.p.chatHandler(&chat); envelope != nil {
			event = *envelope
		} else {
			event.EventID = chat.EventID
		}
	} else {
		if issues := decodeParams(m, &event); issues != nil {
			rt.invalidParams(m, issues)
			return
		}
		handler = rt.p.handlerFor(&event)
	}
	rt.mu.Lock()
	_, duplicate := rt.live[event.EventID]
	rt.mu.Unlock()
	if duplicate {
		rt.conn.respondError(m.ID, wire.RPCInvalidParams, fmt.Sprintf("event %s is already being handled; every delivery needs its own eventId", event.EventID), nil)
		return
	}
	if handler == nil {
		// No handler takes it: the decision is known at once and holds no slot.
		rt.conn.respond(m.ID, wire.EventAck{EventID: event.EventID, Accepted: false})
		return
	}
	ctx, cancel := context.WithCancelCause(rt.root)
	task := &eventTask{reqID: m.ID, event: &event, handler: handler, cancel: cancel, rt: rt}
	task.due.owner = task
	task.ctx = &Context{Lifecycle: Lifecycle{Context: ctx, s: rt.s, logWrite: rt.eventLogWriter(event.EventID)}, event: &event}
	rt.mu.Lock()
	var refused bool
	if !rt.started {
		refused = len(rt.queue) >= rt.maxConcurrent+rt.queueCapacity
	} else {
		refused = rt.running >= rt.maxConcurrent || len(rt.queue) > 0
	}
	if refused {
		limits := map[string]any{"maxConcurrentEvents": rt.maxConcurrent, "queueCapacity": rt.queueCapacity}
		n := rt.maxConcurrent
		rt.mu.Unlock()
		cancel(nil)
		rt.conn.respondError(m.ID, wire.RPCOverloaded, fmt.Sprintf("all %d event handler(s) are busy; event %s was refused", n, event.EventID), limits)
		return
	}
	rt.live[event.EventID] = task
	// Counted from admission, as the host counts from sending (6.5): the SDK cancels the context itself.
	rt.deadlines.add(&task.due, rt.deadline)
	if rt.started {
		rt.running++
		task.started = true
		rt.mu.Unlock()
		rt.dispatch(task)
		return
	}
	rt.queue = append(rt.queue, task)
	rt.mu.Unlock()
}

// pump starts the events that waited for OnStart.
func (rt *stdioRuntime) pump() {
	for {
		rt.mu.Lock()
		if !rt.started || rt.running >= rt.maxConcurrent || len(rt.queue) == 0 {
			rt.mu.Unlock()
			return
		}
		task := rt.queue[0]
		rt.queue = rt.queue[1:]
		rt.running++
		task.started = true
		rt.mu.Unlock()
		rt.dispatch(task)
	}
}

// dispatch runs an admitted event on a waiting handler goroutine, or on a new one when none waits.
func (rt *stdioRuntime) dispatch(task *eventTask) {
	select {
	case rt.work <- task:
	default:
		go rt.handlerLoop(task)
	}
}

// handlerLoop runs events until the plugin stops.
func (rt *stdioRuntime) handlerLoop(task *eventTask) {
	for {
		rt.runEvent(task)
		select {
		case task = <-rt.work:
		case <-rt.root.Done():
			return
		}
	}
}

// runEvent runs one handler: the ACK as soon as the decision is known, events.completed after it.
func (rt *stdioRuntime) runEvent(task *eventTask) {
	event := task.event
	var ackOnce sync.Once
	ack := func(value wire.EventAck) {
		ackOnce.Do(func() { rt.conn.respond(task.reqID, value) })
	}
	accept := func(intercepted bool) {
		ack(wire.EventAck{EventID: event.EventID, Accepted: true, Intercepted: intercepted})
	}
	if !rt.p.intercepts {
		accept(false)
	}
	task.ctx.onDecide = accept
	started := time.Now()
	err := runHandler(task.handler, task.ctx)
	var perr *wire.PluginError
	if err != nil {
		perr = toPluginError(err)
		rt.logLine(LevelError, fmt.Sprintf("handler for %s %s failed: %s", describeEvent(event), event.EventID, perr.Message), map[string]any{"code": perr.Code}, event.EventID)
	}
	decided, _ := task.ctx.decisionState()
	declined := rt.p.intercepts && !decided && perr != nil
	if declined {
		ack(wire.EventAck{EventID: event.EventID, Accepted: false, Error: perr})
		rt.finish(task, nil)
		return
	}
	accept(false)
	duration := float64(time.Since(started).Microseconds()) / 1000
	// The slot is free before events.completed goes out: the host sends the next event as soon as it
	// has the completion, and that event must find the slot free (Overloaded otherwise).
	rt.finish(task, func() { rt.complete(event.EventID, perr, duration) })
}

// complete sends events.completed without waiting for the answer: the slot is free once it is queued.
func (rt *stdioRuntime) complete(eventID string, perr *wire.PluginError, durationMs float64) {
	token := rt.token()
	params := wire.EventsCompletedParams{Token: token, EventID: eventID, Error: perr, DurationMs: &durationMs}
	rt.conn.notify(wire.MethodEventsCompleted, params, rt.requestTimeout(), func(_ []byte, err error) {
		if err != nil && !rt.conn.isClosed() {
			rt.errorf("[warn] events.completed for %s failed: %v", eventID, err)
		}
	})
}

// finish frees the event's slot, then runs report (the completion), then tells a waiting stop that no
// handler runs any more, so the report is queued before the stop flushes and exits.
func (rt *stdioRuntime) finish(task *eventTask, report func()) {
	rt.deadlines.stop(&task.due)
	task.cancel(nil)
	rt.mu.Lock()
	delete(rt.live, task.event.EventID)
	if task.started {
		rt.running--
	}
	rt.mu.Unlock()
	if report != nil {
		report()
	}
	rt.mu.Lock()
	if rt.running == 0 && rt.idle != nil {
		close(rt.idle)
		rt.idle = nil
	}
	rt.mu.Unlock()
	rt.pump()
}

// cancel handles events.cancel and the handler deadline: drops a waiting event (answered Cancelled) or
// cancels a running handler's context. False when no such event waits or runs.
func (rt *stdioRuntime) cancel(eventID, reason string) bool {
	rt.mu.Lock()
	task, ok := rt.live[eventID]
	if !ok {
		rt.mu.Unlock()
		return false
	}
	if !task.started {
		rt.queue = slices.DeleteFunc(rt.queue, func(t *eventTask) bool { return t == task })
		delete(rt.live, eventID)
		rt.mu.Unlock()
		rt.deadlines.stop(&task.due)
		task.cancel(nil)
		rt.conn.respondError(task.reqID, wire.RPCCancelled, fmt.Sprintf("event %s was cancelled before its handler started", eventID), nil)
		return true
	}
	rt.mu.Unlock()
	task.cancel(errEventCancelled(eventID, reason))
	return true
}

func (rt *stdioRuntime) onCancel(m *rpcMessage) {
	var params wire.EventsCancelParams
	if issues := decodeParams(m, &params); issues != nil {
		rt.invalidParams(m, issues)
		return
	}
	rt.conn.respond(m.ID, wire.EventsCancelResult{Cancelled: rt.cancel(params.EventID, params.Reason)})
}
