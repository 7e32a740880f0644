package results

import (
	"fmt"
	"time"
)

// BoundaryMetrics is boundary's JSON.
type BoundaryMetrics struct {
	Limit       int           `json:"limit"`
	Window      time.Duration `json:"window_ns"`
	LearnedFrom string        `json:"learned_from"` // flags, headers, probing
	BoundaryAt  time.Duration `json:"boundary_at_ns"`
	Uncertainty time.Duration `json:"boundary_uncertainty_ns"`
	// WindowUncertainty bounds the error of a probed W (half-widths of the
	// two refill brackets).
	WindowUncertainty time.Duration `json:"window_uncertainty_ns,omitempty"`
	Before            int           `json:"admitted_before"`
	After             int           `json:"admitted_after"`
	Admitted          int           `json:"admitted"`
	Span              time.Duration `json:"straddle_span_ns"`
	Ratio             float64       `json:"ratio"`
	Leaks             bool          `json:"leaks"`
	// Share is a shard's part of each volley (absent for a whole run); its
	// Ratio is then what it admitted over its share.
	Share int `json:"share,omitempty"`
	// VolleyBefore and VolleyAfter are how many requests each volley of
	// the straddle that counted held.
	VolleyBefore int `json:"volley_before,omitempty"`
	VolleyAfter  int `json:"volley_after,omitempty"`
}

// Report is boundary's table and verdict for its metrics, with volleys of
// nb and na requests (shared by a merged sharded run).
func (m BoundaryMetrics) Report(nb, na int, s Summary) Report {
	judgement := "holds"
	switch {
	case m.Leaks:
		judgement = "the boundary leaks"
	case m.Ratio > 1.2:
		judgement = "a partial leak"
	}
	limit := m.Limit
	if m.Share > 0 {
		limit = m.Share
	}
	verdict := fmt.Sprintf("admitted %d in %.2f s against %d per %s: %.2f× — %s",
		m.Admitted, m.Span.Seconds(), limit, m.Window, m.Ratio, judgement)
	rows := [][]string{
		{"limit L / window W", fmt.Sprintf("%d / %s (from %s)", m.Limit, m.Window, m.LearnedFrom)},
		{"boundary located", fmt.Sprintf("at +%.3f s, ± %s", m.BoundaryAt.Seconds(), ms(m.Uncertainty))},
		{"admitted just before", fmt.Sprintf("%d of %d", m.Before, nb)},
		{"admitted just after", fmt.Sprintf("%d of %d", m.After, na)},
		{"straddle span", ms(m.Span)},
		{"admitted ÷ L", fmt.Sprintf("%.2f×", m.Ratio)},
	}
	return Report{Profile: "boundary", Verdict: verdict, Rows: rows, Metrics: ProfileMetrics{Boundary: &m}, Summary: s}
}
