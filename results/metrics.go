package results

import (
	"sort"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Metrics aggregates results as they arrive, in constant memory: latency and
// pacing lateness in HDR histograms (microseconds, 3 significant figures),
// counts by outcome. Safe for concurrent use.
type Metrics struct {
	mu         sync.Mutex
	latency    *hdrhistogram.Histogram
	lateness   *hdrhistogram.Histogram
	Requests   int
	Admitted   int
	Rejected   int
	Errors     int
	Statuses   map[int]int
	ErrorKinds map[string]int
	FirstSent  time.Duration
	LastSent   time.Duration
	LastDone   time.Duration
}

// NewMetrics makes an empty aggregate. Latencies up to 10 minutes fit.
func NewMetrics() *Metrics {
	return &Metrics{
		latency:    hdrhistogram.New(1, int64(10*time.Minute/time.Microsecond), 3),
		lateness:   hdrhistogram.New(0, int64(10*time.Minute/time.Microsecond), 3),
		Statuses:   map[int]int{},
		ErrorKinds: map[string]int{},
		FirstSent:  -1,
	}
}

// Add records one result.
func (m *Metrics) Add(r *Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Requests++
	if m.FirstSent < 0 || r.Sent < m.FirstSent {
		m.FirstSent = r.Sent
	}
	m.LastSent = max(m.LastSent, r.Sent)
	m.LastDone = max(m.LastDone, r.Done)
	_ = m.lateness.RecordValue(max(int64(r.Lateness()/time.Microsecond), 0))
	if r.Error != "" {
		m.Errors++
		m.ErrorKinds[r.Error]++
		return
	}
	m.Statuses[r.Status]++
	_ = m.latency.RecordValue(max(int64(r.Latency()/time.Microsecond), 1))
	switch {
	case r.Admitted():
		m.Admitted++
	case r.Rejected():
		m.Rejected++
	}
}

// Summary is a snapshot for reports.
type Summary struct {
	Requests    int            `json:"requests"`
	Admitted    int            `json:"admitted"`
	Rejected    int            `json:"rejected"`
	Errors      int            `json:"errors"`
	Statuses    map[int]int    `json:"statuses"`
	ErrorKinds  map[string]int `json:"error_kinds,omitempty"`
	SendSpan    time.Duration  `json:"send_span_ns"`
	SentRate    float64        `json:"sent_rate_per_s"`
	Latency     Percentiles    `json:"latency"`
	Lateness    Percentiles    `json:"lateness"`
	LatencyHist []Bucket       `json:"latency_histogram,omitempty"`
}

// Percentiles of a distribution.
type Percentiles struct {
	P50  time.Duration `json:"p50_ns"`
	P90  time.Duration `json:"p90_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
	Max  time.Duration `json:"max_ns"`
	Mean time.Duration `json:"mean_ns"`
}

// Bucket is one bar of the latency distribution.
type Bucket struct {
	UpTo  time.Duration `json:"up_to_ns"`
	Count int64         `json:"count"`
}

func percentiles(h *hdrhistogram.Histogram) Percentiles {
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	return Percentiles{
		P50: us(h.ValueAtQuantile(50)), P90: us(h.ValueAtQuantile(90)), P99: us(h.ValueAtQuantile(99)),
		P999: us(h.ValueAtQuantile(99.9)), Max: us(h.Max()), Mean: time.Duration(h.Mean() * float64(time.Microsecond)),
	}
}

// Summary snapshots the aggregate.
func (m *Metrics) Summary() Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Summary{
		Requests: m.Requests, Admitted: m.Admitted, Rejected: m.Rejected, Errors: m.Errors,
		Statuses: map[int]int{}, Latency: percentiles(m.latency), Lateness: percentiles(m.lateness),
	}
	for k, v := range m.Statuses {
		s.Statuses[k] = v
	}
	if len(m.ErrorKinds) > 0 {
		s.ErrorKinds = map[string]int{}
		for k, v := range m.ErrorKinds {
			s.ErrorKinds[k] = v
		}
	}
	if m.Requests > 0 {
		s.SendSpan = m.LastSent - m.FirstSent
		if s.SendSpan > 0 {
			s.SentRate = float64(m.Requests-1) / s.SendSpan.Seconds()
		}
	}
	s.LatencyHist = logBuckets(m.latency)
	return s
}

// logBuckets folds the histogram into power-of-two microsecond bars, a
// shape small enough to draw.
func logBuckets(h *hdrhistogram.Histogram) []Bucket {
	counts := map[int64]int64{}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		up := int64(1)
		for up < bar.To {
			up <<= 1
		}
		counts[up] += bar.Count
	}
	var out []Bucket
	for up, c := range counts {
		out = append(out, Bucket{UpTo: time.Duration(up) * time.Microsecond, Count: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpTo < out[j].UpTo })
	return out
}

// Imprecise reports whether the engine fell behind its schedule: p99
// lateness above half a millisecond means the timing claims of the run
// cannot be trusted to that precision.
func (s Summary) Imprecise() bool { return s.Lateness.P99 > 500*time.Microsecond }

// Merge adds o's aggregate to m exactly: the counts add up and the HDR
// histograms merge bucket by bucket, so the percentiles are those of all
// the requests together (the shards of one run, whose offsets share one
// zero). o must not change meanwhile.
func (m *Metrics) Merge(o *Metrics) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if o.Requests == 0 {
		return
	}
	m.latency.Merge(o.latency)
	m.lateness.Merge(o.lateness)
	m.Requests += o.Requests
	m.Admitted += o.Admitted
	m.Rejected += o.Rejected
	m.Errors += o.Errors
	for k, v := range o.Statuses {
		m.Statuses[k] += v
	}
	for k, v := range o.ErrorKinds {
		m.ErrorKinds[k] += v
	}
	if m.FirstSent < 0 || o.FirstSent < m.FirstSent {
		m.FirstSent = o.FirstSent
	}
	m.LastSent = max(m.LastSent, o.LastSent)
	m.LastDone = max(m.LastDone, o.LastDone)
}
