package hostsdk

import (
	"sync"
	"time"
)

// deadlines runs functions at their deadlines with one timer for all of them. Every event has a handler
// deadline and every request to the host a timeout, nearly all of them stopped long before they are due:
// a timer each (created, put in the runtime's heap, stopped) costs more than the rest of a short
// exchange's bookkeeping. Here a deadline is a node of a list kept in order of its time (added at the end
// in practice: the durations of one runtime are equal, so later deadlines are due later), stopping one
// unlinks it, and the one timer is set for the first. When the first is stopped the timer is left alone:
// it fires, finds nothing due, and is set again for the new first, so with exchanges far shorter than the
// durations it fires about once per duration.
type deadlines struct {
	mu          sync.Mutex
	first, last *deadline
	timer       *time.Timer
	armed       bool      // the timer is set, for armedAt
	armedAt     time.Time // when it fires
}

// deadline is one entry; its owner embeds it and sets owner (whose expire runs once at the deadline, on
// the timer's goroutine, unless stopped before) or fn.
type deadline struct {
	at         time.Time
	owner      expirer
	fn         func()
	prev, next *deadline
	queued     bool
}

type expirer interface{ expire() }

func newDeadlines() *deadlines {
	d := &deadlines{}
	d.timer = time.AfterFunc(time.Hour, d.fire)
	d.timer.Stop()
	return d
}

// add schedules e's owner (or fn) to run after the duration.
func (d *deadlines) add(e *deadline, after time.Duration) {
	at := time.Now().Add(after)
	d.mu.Lock()
	defer d.mu.Unlock()
	e.at = at
	e.queued = true
	p := d.last
	for p != nil && p.at.After(at) {
		p = p.prev
	}
	// e goes after p (at the front when p is nil).
	e.prev = p
	if p == nil {
		e.next = d.first
		d.first = e
	} else {
		e.next = p.next
		p.next = e
	}
	if e.next == nil {
		d.last = e
	} else {
		e.next.prev = e
	}
	if !d.armed || at.Before(d.armedAt) {
		d.arm(at)
	}
}

// stop removes e; false when it already ran (or is running) or was never added.
func (d *deadlines) stop(e *deadline) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !e.queued {
		return false
	}
	d.unlink(e)
	return true
}

func (d *deadlines) unlink(e *deadline) {
	if e.prev == nil {
		d.first = e.next
	} else {
		e.prev.next = e.next
	}
	if e.next == nil {
		d.last = e.prev
	} else {
		e.next.prev = e.prev
	}
	e.prev, e.next, e.queued = nil, nil, false
}

func (d *deadlines) arm(at time.Time) {
	d.armed, d.armedAt = true, at
	d.timer.Reset(time.Until(at))
}

// fire runs what is due and sets the timer for the first deadline left.
func (d *deadlines) fire() {
	now := time.Now()
	var due []*deadline
	d.mu.Lock()
	for e := d.first; e != nil && !e.at.After(now); e = d.first {
		d.unlink(e)
		due = append(due, e)
	}
	d.armed = false
	if d.first != nil {
		d.arm(d.first.at)
	}
	d.mu.Unlock()
	for _, e := range due {
		if e.owner != nil {
			e.owner.expire()
		} else {
			e.fn()
		}
	}
}
