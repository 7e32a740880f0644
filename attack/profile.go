package attack

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Report is what a profile concludes: a one-line verdict, rows for a short
// table, and the profile's metrics for JSON.
type Report struct {
	Profile string         `json:"profile"`
	Verdict string         `json:"verdict"`
	Rows    [][]string     `json:"-"`
	Metrics ProfileMetrics `json:"metrics"`
	Summary Summary        `json:"summary"`
	Notes   []string       `json:"notes,omitempty"`
}

// UnmarshalJSON reads a Report back (attack -o json) with its metrics
// typed by its profile, as the live run had them.
func (r *Report) UnmarshalJSON(b []byte) error {
	type plain Report
	var w struct {
		plain
		Metrics json.RawMessage `json:"metrics"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	m, err := DecodeMetrics(w.Profile, w.Metrics)
	if err != nil {
		return err
	}
	*r = Report(w.plain)
	r.Metrics = m
	return nil
}

// ProfileMetrics are a profile's own figures: exactly the field of the
// profile that ran is set (Clients for storm and backoff). In JSON they are
// that profile's object alone.
type ProfileMetrics struct {
	Steady   *SteadyMetrics
	Burst    *BurstMetrics
	Boundary *BoundaryMetrics
	Clients  *ClientsMetrics
}

// MarshalJSON writes the set profile's object (null when none is).
func (m ProfileMetrics) MarshalJSON() ([]byte, error) {
	switch {
	case m.Steady != nil:
		return json.Marshal(m.Steady)
	case m.Burst != nil:
		return json.Marshal(m.Burst)
	case m.Boundary != nil:
		return json.Marshal(m.Boundary)
	case m.Clients != nil:
		return json.Marshal(m.Clients)
	}
	return []byte("null"), nil
}

// DecodeMetrics reads the JSON of a profile's metrics (as MarshalJSON
// wrote it) into the profile's type. Empty or null JSON gives none set.
func DecodeMetrics(profile string, b []byte) (ProfileMetrics, error) {
	var m ProfileMetrics
	if len(b) == 0 || string(b) == "null" {
		return m, nil
	}
	var err error
	switch profile {
	case "steady":
		m.Steady = new(SteadyMetrics)
		err = json.Unmarshal(b, m.Steady)
	case "burst":
		m.Burst = new(BurstMetrics)
		err = json.Unmarshal(b, m.Burst)
	case "boundary":
		m.Boundary = new(BoundaryMetrics)
		err = json.Unmarshal(b, m.Boundary)
	case "storm", "backoff":
		m.Clients = new(ClientsMetrics)
		err = json.Unmarshal(b, m.Clients)
	default:
		return m, fmt.Errorf("metrics of unknown profile %q", profile)
	}
	if err != nil {
		return ProfileMetrics{}, fmt.Errorf("%s metrics: %w", profile, err)
	}
	return m, nil
}

// Profile is one attack shape.
type Profile interface {
	Name() string
	// Run drives the engine (already begun) and analyses the results it
	// collected: c holds every result of the run so far (in send order
	// when c.Keep).
	Run(ctx context.Context, e *Engine, c *Collector) (Report, error)
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

// statusCounts counts the answers of rs by status (errors have none).
func statusCounts(rs []*Result) map[int]int {
	out := map[int]int{}
	for _, r := range rs {
		if r.Error == "" {
			out[r.Status]++
		}
	}
	return out
}

// statusRows is a table row listing every status seen with its count, so
// a 404 or 500 is never hidden behind "admitted" and "rejected".
func statusRows(statuses map[int]int) [][]string {
	if len(statuses) == 0 {
		return nil
	}
	codes := make([]int, 0, len(statuses))
	for code := range statuses {
		codes = append(codes, code)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, code := range codes {
		parts[i] = fmt.Sprintf("%d (%d)", code, statuses[code])
	}
	return [][]string{{"statuses", strings.Join(parts, ", ")}}
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

// ProfileNames are the profiles' names, for a command line: a new slice
// each call.
func ProfileNames() []string {
	return []string{"steady", "burst", "boundary", "storm", "backoff"}
}
