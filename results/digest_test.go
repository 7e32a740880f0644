package results

import (
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// An attack's stream of a million results is reported in bounded memory:
// the heap in use while digesting it stays within a few MB of where it
// started (holding the results would take hundreds), and the figures are
// every result's.
func TestDigestReadsInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a million results")
	}
	const n = 1_000_000
	path := filepath.Join(t.TempDir(), "big.rcs")
	writeSynthetic(t, path, n)
	admitted, rejected := 0, 0
	maxThroughputResults(n, func(r *Result) {
		if r.Status == 200 {
			admitted++
		} else {
			rejected++
		}
	})

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	start := time.Now()
	d, err := DigestStreamFile(path)
	took := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	grew := float64(peak.Load()-min(peak.Load(), base)) / (1 << 20)
	t.Logf("%d results digested in %v (%.1fM/s), heap in use grew by at most %.1f MB", n, took, float64(n)/took.Seconds()/1e6, grew)
	// The sample (10,000 results with their headers) and the HDR
	// histograms are most of it; a million results would be ~600 MB.
	const bound = 48
	if grew > bound {
		t.Errorf("the heap in use grew by %.1f MB reading %d results: more than %d MB", grew, n, bound)
	}
	s := d.Summary
	if s.Requests != n || s.Admitted != admitted || s.Rejected != rejected || d.End == nil || d.Truncated {
		t.Errorf("digest: %d requests, %d admitted, %d rejected (end %v, truncated %v); want %d, %d, %d",
			s.Requests, s.Admitted, s.Rejected, d.End, d.Truncated, n, admitted, rejected)
	}
	if len(d.Sample) != MergeSample || !d.Sampled {
		t.Errorf("sample of %d (sampled %v), want %d", len(d.Sample), d.Sampled, MergeSample)
	}
}

// The digest of a stream is the same in either format: its figures, its
// sample (headers and all) and its records.
func TestDigestSameInBothFormats(t *testing.T) {
	dir := t.TempDir()
	rs := randomResults(rand.New(rand.NewPCG(8, 8)), 3*MergeSample/2)
	h := StreamHeader{Command: "attack", Profile: "steady"}
	var ds []*Digest
	for _, name := range []string{"d.jsonl", "d.rcs"} {
		path := filepath.Join(dir, name)
		writeStream(t, path, h, rs, true)
		d, err := DigestStreamFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	a, b := ds[0], ds[1]
	if a.Format != JSONLines || b.Format != Compact {
		t.Errorf("formats %v and %v", a.Format, b.Format)
	}
	a.Format = b.Format
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the digests differ:\n%+v\n%+v", a.Summary, b.Summary)
	}
	if !b.Sampled || len(b.Sample) != MergeSample || b.Summary.Requests != len(rs) {
		t.Errorf("%d requests, a sample of %d (sampled %v)", b.Summary.Requests, len(b.Sample), b.Sampled)
	}
}
