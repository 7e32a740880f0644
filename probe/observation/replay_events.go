package observation

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// The timing uncertainty of a replay. We see when a request was sent and
// when its answer came back, not when the server decided on it: that was
// somewhere in between, about half a round trip after the send.

// schedulingSlack is what the schedulers on the client and the server add to
// that uncertainty by themselves: a timer tick and a context switch on a
// loaded machine.
const schedulingSlack = time.Millisecond

// ArrivalUncertainty is how far the estimate of when the server saw a
// request (send + RTT/2) may be off: half a round trip either way, plus
// scheduling. Requests that arrived closer together than this were handled
// in an order nobody can see (a cluster), and a model whose decisions depend
// on absolute time (wall-aligned windows) is replayed at this clock offset
// either way.
func ArrivalUncertainty(rtt time.Duration) time.Duration { return rtt/2 + schedulingSlack }

// DecisionUncertainty is how far the instant of a decision may be from
// where the replay puts it: anywhere in the round trip, plus scheduling on
// both sides. A decision the model makes differently only within this of
// the observed one is not a mismatch.
func DecisionUncertainty(rtt time.Duration) time.Duration { return rtt + 2*schedulingSlack }

// singletonNoise is the delay a lone request may pick up from a loaded
// machine before it counts as queueing (a stall of a few scheduler slices).
const singletonNoise = 25 * time.Millisecond

// Event is one observed decision, placed on the server's time line.
type Event struct {
	Index    int // of its result in Observation.Results
	At       time.Time
	Key      string
	Admitted bool
	Delay    time.Duration // observed added latency of an admitted request
	Hold     time.Duration // how long the server kept it in flight (concurrency)
	// Sent and answered are when the client sent it and read its answer
	// (zero when unknown): a request sent after another's answer was read
	// reached the server after that one left it.
	Sent, Answered time.Time

	cluster    int           // index of the first event of its near-simultaneous group
	size       int           // that group's size
	JudgeDelay bool          // whether its delay is evidence (see markClusters)
	Noise      time.Duration // delay the machine adds by itself here (see markClusters)

	// Stop, when set, abandons the fits of this time line (a background
	// fit nobody will read); every event carries it, so a fit of any part
	// of the time line sees it.
	Stop *atomic.Bool

	rejectLatency time.Duration // a rejection's latency above the RTT
	Burst         string        // the burst phase it was released in, if any
	// Lone: the only request of its key. Every model admits a key's
	// first request at once, so the replay answers it without the model
	// (a limit per connection has hundreds of keys of one request each,
	// and a model's state for each was most of a fit's work).
	Lone bool
	// Slack widens the timing uncertainty for every event of its key: how
	// far the server's instant for the key's first request (when a limit
	// per connection made its bucket) may be from where it is placed
	// (answeredArrivals).
	Slack time.Duration
	// Floor is the latest arrival among the earlier events of its key:
	// a rejection is judged no earlier than that (see replayOn). Per key,
	// so a replay may take the keys one after another (keyMajor).
	Floor time.Time
}

// Events builds the time line from the observation: its decided results in
// send order, clustered and ordered within clusters as the server most
// plausibly handled them.
func (o *Observation) Events() []Event {
	// A trial sent as another identity (scope.go) is another client's
	// traffic, unless the limit counts every identity together.
	scope := o.Scope()
	global := scope == ScopeGlobal
	perConn := o.PerConnection()
	order := make([]int, 0, len(o.Results))
	for i := range o.Results {
		if Decided(&o.Results[i]) && Counted(&o.Results[i], scope) {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return o.Results[order[a]].Sent < o.Results[order[b]].Sent })
	// A limiter that counts every key together is replayed so: the one
	// request of the scope experiment sent with another key counts against
	// the same capacity, as it did at the server.
	service := o.ServiceTime()
	out := make([]Event, 0, len(order))
	for _, i := range order {
		r := &o.Results[i]
		ev := Event{Index: i, At: o.arrival(r), Key: r.Key, Admitted: r.Admitted(), Sent: o.Start.Add(r.Sent), Answered: o.Start.Add(r.Done)}
		if global {
			ev.Key = ""
		}
		if perConn {
			// Each connection is a client of its own: a burst over 800
			// fresh connections is 800 first requests, not one of 800.
			ev.Key = ConnKey(r)
		}
		if strings.HasPrefix(r.Phase, PhaseBurst) {
			// Released together by design: one cluster however long the
			// sends took on a loaded machine.
			ev.Burst = r.Phase
		}
		if ev.Admitted {
			ev.Delay = max(r.Latency()-service, 0)
		} else {
			ev.rejectLatency = max(r.Latency()-o.RTT, 0)
		}
		// How long the server held it. A request the model admits but the
		// server rejected would have been held like an admitted one: the
		// service time.
		ev.Hold = max(service-o.RTT, 0)
		if ev.Admitted {
			ev.Hold = max(r.Latency()-o.RTT, 0)
		}
		out = append(out, ev)
	}
	o.stalledRejections(out)
	markLone(out)
	markClusters(out, ArrivalUncertainty(o.RTT))
	reorderClusters(out, ArrivalUncertainty(o.RTT))
	if perConn {
		o.answeredArrivals(out, service)
	}
	markFloors(out)
	return out
}

// stalledRejections places a rejection that was answered late together
// with a request sent after it where the server decided it: just before it
// answered. A limiter answers a rejection at once; one answered more than
// stallSlack over the round trip, in the same instant (arrivalUncertainty)
// as a request sent later, was decided when a stalled machine (the
// server, or the probe's reader, not scheduled for milliseconds) resumed
// and answered them together, in an order nobody saw — not where its send
// puts it. A split volley on a loaded machine read so had a token bucket's
// rejection before two admissions sent after it, and the bucket missed
// decisions it made. Placed at max(send, answer − RTT) + RTT/2, the
// rejection joins the cluster of the answers it came out with, whose order
// reorderClusters settles. A burst's requests are one cluster already.
// evs is in send order; it is left in the order of the new instants.
func (o *Observation) stalledRejections(evs []Event) {
	eps := ArrivalUncertainty(o.RTT)
	byDone := make([]int, len(evs))
	for i := range byDone {
		byDone[i] = i
	}
	done := func(i int) time.Duration { return o.Results[evs[i].Index].Done }
	sent := func(i int) time.Duration { return o.Results[evs[i].Index].Sent }
	slices.SortStableFunc(byDone, func(a, b int) int { return cmp.Compare(done(a), done(b)) })
	moved := false
	for k, i := range byDone {
		r := &o.Results[evs[i].Index]
		if evs[i].Admitted || evs[i].Burst != "" || r.Latency()-o.RTT <= stallSlack {
			continue
		}
		together := false
		for _, dir := range []int{-1, 1} {
			for j := k + dir; j >= 0 && j < len(byDone) && (done(byDone[j])-r.Done).Abs() <= eps; j += dir {
				together = together || sent(byDone[j]) > r.Sent
			}
		}
		if together {
			at := o.Start.Add(max(r.Sent, r.Done-o.RTT) + o.RTT/2)
			if at.After(evs[i].At) {
				evs[i].At, moved = at, true
			}
		}
	}
	if moved {
		sort.SliceStable(evs, func(a, b int) bool { return evs[a].At.Before(evs[b].At) })
	}
}

// stallSlack: a rejection answered this much over the round trip was held
// by the machine, not answered at once.
const stallSlack = 2 * schedulingSlack

// answeredArrivals places a burst's requests over a limit per connection
// where the server answered them. Each rides a connection of its own, the
// one request of its key in the burst, which no limiter holds back (the
// key's previous request, if any, was answered before it was sent), so
// the latency it had above a round trip and the service time is the
// server's backlog before the handler ran: 800 requests released at once
// are handled over 10-20 ms, one after another, and the limiter decided on
// each just before answering it. A bucket's phase for that connection
// follows that instant, not the send; placed at the send, the model's
// refills for the connection's later requests run that much early.
//
// That instant is only bounded, though: the answer may also wait to be
// written and read (a loaded machine reading 800 answers), so the server
// may have decided anywhere from the send to the answer. Placed at the
// latest, the connection's refills run late in the model by up to that
// window, and a bucket missed 14-78 of its own decisions in 7 of 8 loaded
// runs; so each of the key's events carries the window as slack, the
// timing uncertainty the replay grants it.
func (o *Observation) answeredArrivals(evs []Event, service time.Duration) {
	slack := map[string]time.Duration{}
	for i := range evs {
		if evs[i].Burst == "" {
			continue
		}
		r := &o.Results[evs[i].Index]
		early := o.arrival(r)
		evs[i].At = Later(early, o.Start.Add(r.Done-o.RTT/2-service))
		if _, seen := slack[evs[i].Key]; !seen {
			slack[evs[i].Key] = evs[i].At.Sub(early)
		}
	}
	for i := range evs {
		evs[i].Slack = slack[evs[i].Key]
	}
}

// markFloors sets each event's floor.
func markFloors(evs []Event) {
	latest := map[string]time.Time{}
	for i := range evs {
		ev := &evs[i]
		ev.Floor = latest[ev.Key]
		latest[ev.Key] = Later(ev.Floor, ev.At)
	}
}

// RejectedEvents counts the events whose request was rejected.
func RejectedEvents(evs []Event) int {
	n := 0
	for _, e := range evs {
		if !e.Admitted {
			n++
		}
	}
	return n
}

// KeyMajor is evs with each key's events together, in time order within
// the key, the key with most events first. Every model but the
// concurrency cap counts each key alone, so its mismatches are the same in
// either order — but a wrong candidate meets the busiest key's decisions,
// where models disagree, first, and the fit's bound stops it there: with a
// limit per connection, hundreds of keys of a request or two each (which
// every model admits) came first in time order.
func KeyMajor(evs []Event) []Event {
	n := map[string]int{}
	first := map[string]int{}
	for i := range evs {
		if _, seen := first[evs[i].Key]; !seen {
			first[evs[i].Key] = i
		}
		n[evs[i].Key]++
	}
	if len(n) < 2 {
		return evs
	}
	out := slices.Clone(evs)
	slices.SortStableFunc(out, func(a, b Event) int {
		if a.Key == b.Key {
			return 0
		}
		if c := n[b.Key] - n[a.Key]; c != 0 {
			return c
		}
		return first[a.Key] - first[b.Key]
	})
	return out
}

// markLone marks the events whose key has no other event.
func markLone(evs []Event) {
	n := map[string]int{}
	for i := range evs {
		n[evs[i].Key]++
	}
	if len(n) == 1 {
		return
	}
	for i := range evs {
		evs[i].Lone = n[evs[i].Key] == 1
	}
}

// ServiceTime is the fastest admitted request's latency: the time the
// backend takes without any queueing. Delays are measured above it.
func (o *Observation) ServiceTime() time.Duration {
	best := time.Duration(-1)
	for i := range o.Results {
		r := &o.Results[i]
		if r.Error == "" && r.Admitted() && (best < 0 || r.Latency() < best) {
			best = r.Latency()
		}
	}
	return max(best, 0)
}

// markClusters groups near-simultaneous arrivals (a burst) and records
// whether a cluster's delays can be judged: only when it also holds
// rejections, which are answered at once and so show the machine's own
// latency noise. A cluster of admissions alone (a flood of a server with no
// limit) grows latency from sheer load, which is not queueing by a limiter.
func markClusters(evs []Event, eps time.Duration) {
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && (evs[j].At.Sub(evs[j-1].At) <= eps || (evs[j].Burst != "" && evs[j].Burst == evs[i].Burst)) {
			j++
		}
		rejected := false
		// The slowest rejection shows how late this machine answers
		// without any queueing (a loaded CPU delays every answer); a lone
		// request gets a fixed allowance for the same.
		noise := singletonNoise
		if j-i > 1 {
			noise = 0
		}
		for k := i; k < j; k++ {
			if !evs[k].Admitted {
				rejected = true
				noise = max(noise, evs[k].rejectLatency)
			}
		}
		for k := i; k < j; k++ {
			evs[k].cluster = i
			evs[k].size = j - i
			evs[k].JudgeDelay = j-i == 1 || rejected
			evs[k].Noise = noise
		}
		i = j
	}
}

// reorderClusters fixes the order within groups of near-simultaneous
// arrivals. Send order says nothing about the order a server handled
// requests that reached it within a timing uncertainty of each other (a
// burst): it admitted whichever it saw first. So within a burst the
// admitted go first, least delayed first (a shaping queue serves in arrival
// order), keeping the cluster's instants.
//
// Any other cluster is a chain of arrivals each within eps of the last (a
// dense trace makes one of hundreds over as many milliseconds), and its
// order is uncertain only between neighbours: an admission moves ahead of
// the rejections that arrived at most eps before it, never further. Moved
// as if the whole chain were one burst, an admission sent 30 ms after a
// run of rejections took the first rejection's instant, and a concurrency
// cap of 32 behind a 47 ms round trip missed 85 of its own decisions.
func reorderClusters(evs []Event, eps time.Duration) {
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && evs[j].cluster == evs[i].cluster {
			j++
		}
		if j-i > 1 {
			reorderCluster(evs[i:j], eps)
		}
		i = j
	}
}

// reorderCluster orders one cluster (see reorderClusters), keeping its
// instants.
func reorderCluster(c []Event, eps time.Duration) {
	times := make([]time.Time, len(c))
	for k := range times {
		times[k] = c[k].At
	}
	burst := c[0].Burst != "" && c[0].Burst == c[len(c)-1].Burst
	// seen is the earliest the server may have handled an event before
	// the others: an admission up to eps early, in a burst all at once.
	seen := func(e *Event) time.Time {
		switch {
		case burst:
			return c[0].At
		case e.Admitted:
			return e.At.Add(-eps)
		}
		return e.At
	}
	sort.SliceStable(c, func(a, b int) bool {
		if sa, sb := seen(&c[a]), seen(&c[b]); !sa.Equal(sb) {
			return sa.Before(sb)
		}
		if c[a].Admitted != c[b].Admitted {
			return c[a].Admitted
		}
		return c[a].Delay < c[b].Delay
	})
	for k := range c {
		c[k].At = times[k]
	}
}

// Later is the later of two instants.
func Later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
