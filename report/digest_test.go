package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// A long attack's stream is reported from its digest: the figures are
// every request's, the charts draw a sample and say so, and the page's
// counts are every request's too.
func TestAttackFromDigestLongRun(t *testing.T) {
	const n = 3 * results.MergeSample
	path := filepath.Join(t.TempDir(), "long.rcs")
	s, err := results.CreateStream(path, results.StreamHeader{Command: "attack", Target: "t", URL: "http://127.0.0.1:9/", Profile: "steady"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := &results.Result{Seq: i + 1, Sent: time.Duration(i) * time.Millisecond, Done: time.Duration(i)*time.Millisecond + 300*time.Microsecond, Status: 200}
		if i%3 == 0 {
			r.Status = 429
		}
		s.Add(r)
	}
	if err := s.Close(nil, 0); err != nil {
		t.Fatal(err)
	}
	d, err := results.DigestStreamFile(path)
	if err != nil {
		t.Fatal(err)
	}
	run := AttackFromDigest(d, path)
	if run.Summary.Requests != n || run.Summary.Rejected != n/3 || len(run.Results) != results.MergeSample {
		t.Fatalf("%d requests, %d rejected, %d drawn", run.Summary.Requests, run.Summary.Rejected, len(run.Results))
	}
	if !strings.Contains(strings.Join(run.Notes, "\n"), "an even sample of 10000 of the 30000 requests") {
		t.Errorf("notes: %q", run.Notes)
	}
	if run.ElapsedS < float64(n-1)/1000 {
		t.Errorf("elapsed %.3f s, want the last completion's", run.ElapsedS)
	}
	if pr := newPageRun(1, &run, 1); pr.Counts.Requests != n || pr.Counts.Rejected != n/3 {
		t.Errorf("the page counts %+v", pr.Counts)
	}
}
