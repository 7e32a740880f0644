package results

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Counting over a set of results: what the profiles conclude and the merge
// of their shards both count with these.

// Count tallies a set of results (Tally).
type Count struct {
	Total    int `json:"total"`
	Admitted int `json:"admitted"`
	Rejected int `json:"rejected"`
	Errors   int `json:"errors"`
	Other    int `json:"other"`
}

// Tally counts rs by outcome: errors, admissions, rejections and other
// answers.
func Tally(rs []*Result) Count {
	var c Count
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

// Spread is the time between the first and last send of rs.
func Spread(rs []*Result) time.Duration {
	if len(rs) == 0 {
		return 0
	}
	lo, hi := rs[0].Sent, rs[0].Sent
	for _, r := range rs {
		lo, hi = min(lo, r.Sent), max(hi, r.Sent)
	}
	return hi - lo
}

// FirstSent is the earliest send of rs (0 when there is none).
func FirstSent(rs []*Result) time.Duration {
	if len(rs) == 0 {
		return 0
	}
	t := rs[0].Sent
	for _, r := range rs {
		t = min(t, r.Sent)
	}
	return t
}

// Quantile is the q-quantile (0..1) of sorted durations, the nearest rank
// (0 when there is none).
func Quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ms writes d in milliseconds for a verdict or a table.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
