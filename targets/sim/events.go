package sim

import "time"

// eventKind is what happens at an event.
type eventKind int

const (
	evArrive    eventKind = iota // a request reaches the server, which decides it
	evWritten                    // the server writes its answer (a concurrency slot is free again)
	evDeliver                    // the answer reaches the client's reader
	evBudget                     // the run's time budget ends
	evInterrupt                  // the run is interrupted (Config.Interrupt)
)

// event is one thing that happens at a virtual instant; events at one
// instant happen in the order they were scheduled.
type event struct {
	at    time.Duration
	order int
	kind  eventKind
	f     *flight
	drawn bool // a stall was drawn for it already
}

// eventQueue is a min-heap of events by (at, order): container/heap's
// interface.
type eventQueue struct {
	items []*event
	order int
}

func (q *eventQueue) Len() int { return len(q.items) }
func (q *eventQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	return a.at < b.at || (a.at == b.at && a.order < b.order)
}
func (q *eventQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *eventQueue) Push(x any)    { q.items = append(q.items, x.(*event)) }
func (q *eventQueue) Pop() any {
	last := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return last
}
