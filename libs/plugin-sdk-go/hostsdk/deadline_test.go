package hostsdk

import (
	"sync"
	"testing"
	"time"
)

// Deadlines run once each, in order, not before they are due; stopped ones never run; one added with a
// shorter duration than those queued runs first.
func TestDeadlinesRunWhenDueUnlessStopped(t *testing.T) {
	d := newDeadlines()
	var mu sync.Mutex
	var ran []int
	ranAt := map[int]time.Duration{}
	start := time.Now()
	entries := make([]deadline, 6)
	done := make(chan struct{}, len(entries))
	for i := range entries {
		i := i
		entries[i].fn = func() {
			mu.Lock()
			ran = append(ran, i)
			ranAt[i] = time.Since(start)
			mu.Unlock()
			done <- struct{}{}
		}
	}
	after := []time.Duration{80, 60, 120, 100, 40, 140}
	for i := range entries {
		d.add(&entries[i], after[i]*time.Millisecond)
	}
	if !d.stop(&entries[2]) || d.stop(&entries[2]) {
		t.Fatal("stop: true once for a queued deadline, then false")
	}
	for range 5 {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("only %v ran", ran)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []int{4, 1, 0, 3, 5}
	for i, e := range want {
		if ran[i] != e {
			t.Fatalf("ran %v, want %v", ran, want)
		}
		if ranAt[e] < after[e]*time.Millisecond {
			t.Fatalf("deadline %d ran after %v, before its %v", e, ranAt[e], after[e]*time.Millisecond)
		}
	}
	if d.stop(&entries[0]) {
		t.Fatal("a deadline that ran was stopped")
	}
	if d.first != nil || d.last != nil {
		t.Fatal("the list is not empty after every deadline ran")
	}
}

// Stopping the first deadline leaves the timer set; it fires, finds nothing due and is set for the next.
func TestDeadlinesAfterTheFirstIsStopped(t *testing.T) {
	d := newDeadlines()
	ran := make(chan int, 2)
	var a, b deadline
	a.fn = func() { ran <- 1 }
	b.fn = func() { ran <- 2 }
	d.add(&a, 20*time.Millisecond)
	d.add(&b, 60*time.Millisecond)
	d.stop(&a)
	select {
	case got := <-ran:
		if got != 2 {
			t.Fatalf("deadline %d ran", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second deadline never ran")
	}
	select {
	case got := <-ran:
		t.Fatalf("deadline %d ran as well", got)
	case <-time.After(100 * time.Millisecond):
	}
}
