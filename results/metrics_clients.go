package results

import (
	"fmt"
	"strings"
	"time"
)

// ClientsMetrics is storm's and backoff's JSON: the same fields, so the two
// runs can be put side by side.
type ClientsMetrics struct {
	Clients       int           `json:"clients"`
	Goal          int           `json:"goal"`
	Attempts      int           `json:"attempts"`
	Successes     int           `json:"successes"`
	Amplification float64       `json:"amplification"` // attempts ÷ successes
	Finished      int           `json:"finished"`      // clients that reached their goal
	FinishP50     time.Duration `json:"finish_p50_ns"`
	FinishP99     time.Duration `json:"finish_p99_ns"`
	Bin           time.Duration `json:"bin_ns"`
	AttemptRate   []float64     `json:"attempt_rate_per_s"` // per bin from the first send; the last over its actual width
	PeakRate      float64       `json:"peak_attempt_rate_per_s"`
	// MeanRate is every attempt over Elapsed, the time the clients really
	// ran (to the last one's finish, or to the cut when CutShort).
	MeanRate float64       `json:"mean_attempt_rate_per_s"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	CutShort bool          `json:"cut_short,omitempty"`
}

// PeakRate is the highest bin's rate; a last, partial bin may hold too few
// attempts for a peak.
func PeakRate(rates []float64, partial bool) float64 {
	peak := 0.0
	for i, v := range rates {
		if !partial || i < len(rates)-1 || len(rates) == 1 {
			peak = max(peak, v)
		}
	}
	return peak
}

// Report is storm's or backoff's table and verdict for its metrics (shared
// by a merged sharded run).
func (m ClientsMetrics) Report(name string, s Summary) Report {
	verdict := fmt.Sprintf("%d %s clients wanting %d each: %d attempts for %d successes — amplification %.1f×; %d/%d finished",
		m.Clients, name, m.Goal, m.Attempts, m.Successes, m.Amplification, m.Finished, m.Clients)
	if m.CutShort {
		verdict += fmt.Sprintf(" before the run was cut short at %.2f s", m.Elapsed.Seconds())
	}
	rows := [][]string{
		{"clients × goal", fmt.Sprintf("%d × %d", m.Clients, m.Goal)},
		{"attempts", fmt.Sprint(m.Attempts)},
		{"successes", fmt.Sprint(m.Successes)},
		{"amplification (attempts ÷ successes)", fmt.Sprintf("%.2f×", m.Amplification)},
		{"clients finished", fmt.Sprintf("%d of %d", m.Finished, m.Clients)},
		{"time to finish p50 / p99", fmt.Sprintf("%.2f s / %.2f s", m.FinishP50.Seconds(), m.FinishP99.Seconds())},
		{"attempt rate mean / peak", fmt.Sprintf("%.0f/s over %.2f s / %.0f/s", m.MeanRate, m.Elapsed.Seconds(), m.PeakRate)},
		{"attempt rate over time", sparkline(m.AttemptRate)},
	}
	return Report{Profile: name, Verdict: verdict, Rows: rows, Metrics: ProfileMetrics{Clients: &m}, Summary: s}
}

// sparkline draws a series in eight levels for the terminal table.
func sparkline(v []float64) string {
	const levels = "▁▂▃▄▅▆▇█"
	peak := 0.0
	for _, x := range v {
		peak = max(peak, x)
	}
	if peak == 0 {
		return ""
	}
	runes := []rune(levels)
	var b strings.Builder
	step := max(1, len(v)/60) // at most ~60 columns
	for i := 0; i < len(v); i += step {
		x := 0.0
		for j := i; j < min(i+step, len(v)); j++ {
			x = max(x, v[j])
		}
		b.WriteRune(runes[min(len(runes)-1, int(x/peak*float64(len(runes)-1)+0.5))])
	}
	return b.String()
}
