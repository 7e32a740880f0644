package report

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

func TestJSONRecordedProbe(t *testing.T) {
	d, rec := probeDoc(t)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	var got struct {
		SchemaVersion int    `json:"schema_version"`
		Tool          string `json:"tool"`
		Command       string `json:"command"`
		Runs          []struct {
			Target    string `json:"target"`
			Kind      string `json:"kind"`
			Complete  bool   `json:"complete"`
			Summary   struct{ Requests, Admitted, Rejected int }
			Inference struct {
				Family   string  `json:"family"`
				RatePerS float64 `json:"rate_per_s"`
				Burst    int     `json:"burst"`
			} `json:"inference"`
			Grade *struct {
				Letter string            `json:"letter"`
				Checks []json.RawMessage `json:"checks"`
			} `json:"grade"`
			Results json.RawMessage `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != SchemaVersion || got.Tool != "ratecheck" || got.Command != "probe" || len(got.Runs) != 1 {
		t.Fatalf("%+v", got)
	}
	r := got.Runs[0]
	if r.Kind != "probe" || !r.Complete || r.Summary.Requests != len(rec.Results) || r.Inference.Family != "token_bucket" ||
		r.Inference.Burst != 10 || r.Inference.RatePerS < 9 || r.Inference.RatePerS > 11 || r.Grade == nil || len(r.Grade.Checks) == 0 {
		t.Errorf("run %+v", r)
	}
	if r.Results != nil {
		t.Error("the per-request results belong in the results stream, not the report")
	}
}

// The frozen document survives a round trip through JSON unchanged: every
// field has a tag and reads back.
func TestJSONRoundTrip(t *testing.T) {
	want, err := os.ReadFile(frozenDocFile)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, frozenDoc(t)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s does not survive a round trip:\n%s", frozenDocFile, buf.String())
	}
}

func TestFromStreamAttack(t *testing.T) {
	rec := &results.Recorded{
		Header: results.StreamHeader{Type: "header", Command: "attack", Profile: "burst", Target: "t", Start: time.Unix(1, 0)},
		Results: []results.Result{
			{Seq: 2, Sent: 2 * time.Millisecond, Done: 3 * time.Millisecond, Status: 429},
			{Seq: 1, Sent: time.Millisecond, Done: 5 * time.Millisecond, Status: 200},
		},
		End: &results.StreamEnd{Type: "end", Requests: 2, Notes: []string{"n"}, Elapsed: int64(time.Second)},
	}
	r := AttackFromStream(rec, "a.jsonl")
	if r.Kind != "attack" || r.Inference != nil || r.Grade != nil || r.Results[0].Seq != 1 || r.ElapsedS != 1 ||
		r.Summary.Admitted != 1 || r.Summary.Rejected != 1 || r.RTT != time.Millisecond || !r.Complete || len(r.Notes) != 1 {
		t.Errorf("%+v", r)
	}
	if !strings.Contains(r.Verdict, "ended before the profile's verdict") || r.Metrics != nil {
		t.Errorf("without an outcome: verdict %q, metrics %v", r.Verdict, r.Metrics)
	}
	rec.End.Outcome = &results.ProfileOutcome{Verdict: "burst of 2: 1 admitted", Rows: [][]string{{"admitted", "1"}}, Metrics: results.ProfileMetrics{Burst: &results.BurstMetrics{Admitted: 1}}}
	r = AttackFromStream(rec, "a.jsonl")
	if m, _ := json.Marshal(r.Metrics); r.Verdict != "burst of 2: 1 admitted" || len(r.Rows) != 1 || !strings.Contains(string(m), `"admitted":1,`) {
		t.Errorf("with an outcome: verdict %q rows %v metrics %s", r.Verdict, r.Rows, m)
	}
	for _, h := range []results.StreamHeader{{Command: "probe"}, {Command: "check"}, {Command: "compare", Profile: "probe"}} {
		if !IsProbeStream(h) {
			t.Errorf("%+v is a probe stream", h)
		}
	}
	if IsProbeStream(results.StreamHeader{Command: "compare", Profile: "burst"}) {
		t.Error("compare --profile burst is not a probe")
	}
}

// A merged sharded run's page counts every request, not the sample it
// draws, and names its shards.
func TestHTMLOfMergedRunCountsEveryRequest(t *testing.T) {
	m := &results.Merged{RunID: "r9", Header: results.StreamHeader{Command: "attack", Target: "t", URL: "u", Profile: "steady"},
		Shards:  []results.ShardSummary{{Shard: results.Shard{K: 1, N: 2}, Host: "h1", Requests: 3, Complete: true}, {Shard: results.Shard{K: 2, N: 2}, Host: "h2", Requests: 3, Complete: true}},
		Summary: results.Summary{Requests: 6, Admitted: 6, Statuses: map[int]int{200: 6}},
		Sample:  []results.Result{{Seq: 1, Status: 200, Done: 1000}, {Seq: 2, Status: 200, Sent: 10, Done: 2000}}, Sampled: true}
	var b strings.Builder
	if err := WriteHTML(&b, NewDocument("dev", "attack", "steady", MergedRun(m))); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, `data-metric="requests">6<`) || !strings.Contains(page, "shard 2/2") || !strings.Contains(page, "run r9") {
		t.Errorf("page lacks the merged counts or the shards")
	}
}
