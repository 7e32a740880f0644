package results

import (
	"encoding/json"
	"fmt"
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
