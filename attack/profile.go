package attack

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Report is what a profile concludes: a one-line verdict, rows for a short
// table, and the profile's metrics for JSON.
type Report struct {
	Profile string     `json:"profile"`
	Verdict string     `json:"verdict"`
	Rows    [][]string `json:"-"`
	Metrics any        `json:"metrics"`
	Summary Summary    `json:"summary"`
	Notes   []string   `json:"notes,omitempty"`
}

// Profile is one attack shape.
type Profile interface {
	Name() string
	// Run drives the engine (already begun) and analyses the results it
	// collected. results holds every result of the run so far, in send order.
	Run(ctx context.Context, e *Engine, c *Collector) (Report, error)
}

// Collector keeps the results a profile analyses. Profiles whose runs can be
// huge (steady) leave Keep off and rely on Metrics alone.
type Collector struct {
	Keep    bool
	Metrics *Metrics
	mu      sync.Mutex
	results []*Result
}

// NewCollector makes a collector; keep says whether to retain every result.
func NewCollector(keep bool) *Collector {
	return &Collector{Keep: keep, Metrics: NewMetrics()}
}

// Add is the engine sink.
func (c *Collector) Add(r *Result) {
	c.Metrics.Add(r)
	if c.Keep {
		c.mu.Lock()
		c.results = append(c.results, r)
		c.mu.Unlock()
	}
}

// Results returns the kept results ordered by send time.
func (c *Collector) Results() []*Result {
	c.mu.Lock()
	out := append([]*Result(nil), c.results...)
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Sent < out[j].Sent })
	return out
}

// Phase returns the kept results of one phase, in send order.
func (c *Collector) Phase(name string) []*Result {
	var out []*Result
	for _, r := range c.Results() {
		if r.Phase == name {
			out = append(out, r)
		}
	}
	return out
}

// count tallies a set of results.
type count struct {
	Total    int `json:"total"`
	Admitted int `json:"admitted"`
	Rejected int `json:"rejected"`
	Errors   int `json:"errors"`
	Other    int `json:"other"`
}

func tally(rs []*Result) count {
	var c count
	for _, r := range rs {
		c.Total++
		switch {
		case r.Error != "":
			c.Errors++
		case r.Admitted():
			c.Admitted++
		case r.Rejected():
			c.Rejected++
		default:
			c.Other++
		}
	}
	return c
}

// spread is the time between the first and last send of rs.
func spread(rs []*Result) time.Duration {
	if len(rs) == 0 {
		return 0
	}
	lo, hi := rs[0].Sent, rs[0].Sent
	for _, r := range rs {
		lo, hi = min(lo, r.Sent), max(hi, r.Sent)
	}
	return hi - lo
}

// idle waits d of the run without sending: part of an experiment (letting a
// limiter recover), never synchronisation.
func idle(ctx context.Context, e *Engine, d time.Duration) bool {
	return waitUntil(ctx, time.Now().Add(d))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// Profiles by name, for the command line.
var Profiles = []string{"steady", "burst", "boundary", "storm", "backoff"}
