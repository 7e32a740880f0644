package results

import (
	"fmt"
	"time"
)

// SteadyMetrics is steady's JSON.
type SteadyMetrics struct {
	TargetRate   float64 `json:"target_rate_per_s"`
	AchievedRate float64 `json:"achieved_rate_per_s"`
	AdmittedRate float64 `json:"admitted_rate_per_s"` // over Span
	RejectedPct  float64 `json:"rejected_pct"`
	Imprecise    bool    `json:"imprecise"`
	// Span is the time the rates are over: the planned duration, or the
	// time actually spent sending when the run was cut short (CutShort).
	Span     time.Duration `json:"span_ns"`
	CutShort bool          `json:"cut_short,omitempty"`
	// Planned is the duration the plan asked for.
	Planned time.Duration `json:"planned_ns,omitempty"`
	// Unmeasured says why the rates are not measured (then they are 0):
	// a rate needs at least two sends, and a budget of one request, or a
	// run stopped after its first send, has one.
	Unmeasured string `json:"rates_unmeasured,omitempty"`
}

// Conclude fills the rates from the run's summary: the sent rate over the
// sends' own span, the admitted rate over Span.
func (m *SteadyMetrics) Conclude(s Summary, paced bool) {
	if s.Requests < 2 {
		m.Unmeasured = fmt.Sprintf("%d sent: a rate needs at least 2 requests", s.Requests)
		if s.Requests > 0 {
			m.RejectedPct = 100 * float64(s.Rejected) / float64(s.Requests)
		}
		return
	}
	m.AchievedRate, m.Imprecise = s.SentRate, paced && s.Imprecise()
	if m.Span > 0 {
		m.AdmittedRate = float64(s.Admitted) / m.Span.Seconds()
	}
	m.RejectedPct = 100 * float64(s.Rejected) / float64(s.Requests)
}

// Report is steady's table and verdict for its metrics and summary over a
// plan of planned (shared by a merged sharded run).
func (m SteadyMetrics) Report(planned time.Duration, s Summary) Report {
	verdict := fmt.Sprintf("sent %.1f/s, admitted %.1f/s, rejected %.1f%%", m.AchievedRate, m.AdmittedRate, m.RejectedPct)
	achieved, admitted := fmt.Sprintf("%.1f/s", m.AchievedRate), fmt.Sprintf("%.1f/s over %.2f s", m.AdmittedRate, m.Span.Seconds())
	if m.Unmeasured != "" {
		verdict = fmt.Sprintf("rates not measured (%s), admitted %d, rejected %d", m.Unmeasured, s.Admitted, s.Rejected)
		achieved, admitted = "not measured", "not measured"
	}
	if m.CutShort {
		verdict += fmt.Sprintf("; cut short after %.2f s of %s planned", m.Span.Seconds(), planned)
		if m.Unmeasured == "" {
			verdict += ": rates over the time spent"
		}
	}
	if m.Imprecise {
		verdict += fmt.Sprintf(" — imprecise: sends were up to %s late (p99)", ms(s.Lateness.P99))
	}
	rows := [][]string{
		{"target rate", rateOrMax(m.TargetRate)},
		{"achieved rate", achieved},
		{"admitted rate", admitted},
		{"rejected", fmt.Sprintf("%d (%.1f%%)", s.Rejected, m.RejectedPct)},
		{"errors", fmt.Sprint(s.Errors)},
		{"latency p50 / p99", ms(s.Latency.P50) + " / " + ms(s.Latency.P99)},
		{"pacing error p50 / p99", ms(s.Lateness.P50) + " / " + ms(s.Lateness.P99)},
	}
	rows = append(rows, statusRows(s.Statuses)...)
	return Report{Profile: "steady", Verdict: verdict, Rows: rows, Metrics: ProfileMetrics{Steady: &m}, Summary: s}
}

func rateOrMax(r float64) string {
	if r <= 0 {
		return "max (closed loop)"
	}
	return fmt.Sprintf("%g/s", r)
}
