package attack

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Profile is one attack shape.
type Profile interface {
	Name() string
	// Run drives the engine (already begun) and analyses the results it
	// collected: c holds every result of the run so far (in send order
	// when c.Keep).
	Run(ctx context.Context, e *Engine, c *Collector) (results.Report, error)
}

// A Validator is a profile that can tell, before anything is sent, that it
// cannot run as given with these options (a *ConfigError). Run asks every
// profile that is one.
type Validator interface {
	Validate(opt Options) error
}

// A Warmer is a profile that wants connections open before its first
// instant: Run opens WarmConns(opt) of them before the run's clock starts.
type Warmer interface {
	WarmConns(opt Options) int
}

// A ConfigError is a profile or option that cannot run as given: nothing
// was sent. Field is the one at fault ("Burst.K", "Options.MaxConns"); the
// message names fields as Options.Names says.
type ConfigError struct {
	Field string
	Msg   string
}

func (e *ConfigError) Error() string { return e.Msg }

// configErr builds a ConfigError; the caller names fields in the message
// with Options.name.
func configErr(field, format string, args ...any) *ConfigError {
	return &ConfigError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Collector keeps the results a profile analyses. Profiles whose runs can be
// huge (steady) leave Keep off and rely on Metrics alone.
type Collector struct {
	Keep    bool
	Metrics *results.Metrics
	mu      sync.Mutex
	results []*results.Result
}

// NewCollector makes a collector; keep says whether to retain every result.
func NewCollector(keep bool) *Collector {
	return &Collector{Keep: keep, Metrics: results.NewMetrics()}
}

// Add is the engine sink.
func (c *Collector) Add(r *results.Result) {
	c.Metrics.Add(r)
	if c.Keep {
		c.mu.Lock()
		c.results = append(c.results, r)
		c.mu.Unlock()
	}
}

// Len is how many results it kept, without copying them.
func (c *Collector) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.results)
}

// Results returns the kept results ordered by send time.
func (c *Collector) Results() []*results.Result {
	c.mu.Lock()
	out := append([]*results.Result(nil), c.results...)
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Sent < out[j].Sent })
	return out
}

// Phase returns the kept results of one phase, in send order.
func (c *Collector) Phase(name string) []*results.Result {
	var out []*results.Result
	for _, r := range c.Results() {
		if r.Phase == name {
			out = append(out, r)
		}
	}
	return out
}

// idle waits d of the run without sending: part of an experiment (letting a
// limiter recover), never synchronisation.
func idle(ctx context.Context, e *Engine, d time.Duration) bool {
	return waitUntil(ctx, time.Now().Add(d))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// ProfileNames are the profiles' names, for a command line: a new slice
// each call.
func ProfileNames() []string {
	return []string{"steady", "burst", "boundary", "storm", "backoff"}
}
