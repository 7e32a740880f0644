package results

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// randomResults makes n results that use every field: names and values
// from small sets (so the tables hit) and unique ones (so they churn),
// headers maps of several sizes, bodies, errors, negative, zero and
// extreme times and sequence numbers. Strings are valid UTF-8: JSON Lines
// keeps no other byte for byte.
func randomResults(rng *rand.Rand, n int) []Result {
	texts := []string{"", "steady", "burst", "tail", "key-7", "127.0.0.2", `say "no"`, "<b>&amp;</b>", "tab\there\n",
		"café", "line\u2028sep", "emoji 🚦", strings.Repeat("x", BodyKeep), strings.Repeat("long ", 600)}
	pick := func() string {
		if rng.IntN(4) == 0 {
			return "unique-" + time.Duration(rng.Int64()).String()
		}
		return texts[rng.IntN(len(texts))]
	}
	dur := func() time.Duration {
		switch rng.IntN(6) {
		case 0:
			return 0
		case 1:
			return -time.Duration(rng.Int64N(1e12))
		case 2:
			return time.Duration(rng.Int64())
		case 3:
			return time.Duration(math.MinInt64 + rng.Int64N(10))
		}
		return time.Duration(rng.Int64N(1e11))
	}
	ints := []int{0, 1, -1, 200, 429, 503, math.MaxInt64, math.MinInt64, 1 << 40}
	out := make([]Result, n)
	for i := range out {
		r := Result{Seq: i + 1, Phase: pick(), Key: pick(), Source: pick(), Error: pick(), Body: pick(),
			Scheduled: dur(), Sent: dur(), FirstByte: dur(), Done: dur()}
		if rng.IntN(3) == 0 {
			r.Seq = ints[rng.IntN(len(ints))]
		}
		if rng.IntN(2) == 0 {
			r.Client = ints[rng.IntN(len(ints))]
		}
		if rng.IntN(2) == 0 {
			r.Conn = int64(ints[rng.IntN(len(ints))])
		}
		r.Status = ints[rng.IntN(len(ints))]
		if k := rng.IntN(5); k > 0 {
			r.Headers = map[string]string{}
			for range k {
				r.Headers[pick()] = pick()
			}
		}
		out[i] = r
	}
	return out
}

// normal is r as either format reads it back: an empty Headers map is none.
func normal(rs []Result) []Result {
	if len(rs) == 0 {
		return nil
	}
	out := make([]Result, len(rs))
	for i, r := range rs {
		if len(r.Headers) == 0 {
			r.Headers = nil
		}
		out[i] = r
	}
	return out
}

// writeStream writes rs through a Stream to path and closes it.
func writeStream(t testing.TB, path string, h StreamHeader, rs []Result, end bool) {
	t.Helper()
	s, err := CreateStream(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		s.Add(&rs[i])
	}
	if end {
		s.Conclude(Report{Profile: "steady", Verdict: "v", Rows: [][]string{{"a", "b"}}, Metrics: ProfileMetrics{Steady: &SteadyMetrics{TargetRate: 5}}})
		if err := s.Close([]string{"a note"}, 3*time.Second); err != nil {
			t.Fatal(err)
		}
	}
}

// Every field of every result, the header and the end record read back
// the same from a compact stream as from JSON Lines, and both as written;
// the compact stream converted to JSON Lines is the JSON Lines stream byte
// for byte.
func TestCompactRoundTripsAsJSONLines(t *testing.T) {
	dir := t.TempDir()
	h := StreamHeader{Command: "attack", Target: "t", URL: "http://127.0.0.1:1/", Profile: "steady",
		Options: map[string]string{"rate": "5/s"}, Start: time.Date(2026, 12, 1, 10, 0, 0, 123, time.UTC), RunID: "r", Shard: &Shard{K: 1, N: 2}}
	for seed := range uint64(5) {
		rs := randomResults(rand.New(rand.NewPCG(seed, 7)), 3000)
		jl, cs := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "s.rcs")
		writeStream(t, jl, h, rs, true)
		writeStream(t, cs, h, rs, true)
		a, err := ReadStreamFile(jl)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ReadStreamFile(cs)
		if err != nil {
			t.Fatal(err)
		}
		want := normal(rs)
		if !reflect.DeepEqual(a.Results, want) {
			t.Fatalf("seed %d: JSON Lines does not read back as written", seed)
		}
		for i := range want {
			if !reflect.DeepEqual(b.Results[i], want[i]) {
				t.Fatalf("seed %d: result %d reads back from the compact stream as\n%+v\nnot\n%+v", seed, i, b.Results[i], want[i])
			}
		}
		if len(b.Results) != len(want) {
			t.Fatalf("seed %d: %d results read back, %d written", seed, len(b.Results), len(want))
		}
		if !reflect.DeepEqual(a.Header, b.Header) || !reflect.DeepEqual(a.End, b.End) || b.Truncated {
			t.Fatalf("seed %d: header or end differ:\n%+v %+v\n%+v %+v", seed, a.Header, a.End, b.Header, b.End)
		}
		var conv bytes.Buffer
		f, _ := os.Open(cs)
		if _, err := ConvertToJSONLines(&conv, f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		orig, _ := os.ReadFile(jl)
		if !bytes.Equal(conv.Bytes(), orig) {
			t.Fatalf("seed %d: the compact stream converts to %d bytes of JSON Lines, not the %d written", seed, conv.Len(), len(orig))
		}
		os.Remove(jl)
		os.Remove(cs)
	}
}

// Strings that are not UTF-8 (which JSON Lines replaces) come back from a
// compact stream byte for byte.
func TestCompactKeepsAnyBytes(t *testing.T) {
	rs := []Result{{Seq: 1, Body: "\xff\xfe\x00", Headers: map[string]string{"x-\xff": "\x80"}, Error: "bad \xc3"}}
	var buf bytes.Buffer
	w := newCompactWriter(&buf)
	if err := w.header(StreamHeader{Type: "header"}); err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		w.result(&rs[i])
	}
	w.flush()
	rec, err := ReadStream(&buf)
	if err != nil || !reflect.DeepEqual(rec.Results, rs) {
		t.Fatalf("read %+v, %v; want %+v", rec, err, rs)
	}
}

// compactBytes is a compact stream of rs in blocks of per results, with
// an end record when end.
func compactBytes(t testing.TB, rs []Result, per int, end bool) []byte {
	var buf bytes.Buffer
	w := newCompactWriter(&buf)
	if err := w.header(StreamHeader{Type: "header", Schema: StreamSchema, Command: "attack", Profile: "steady"}); err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		w.result(&rs[i])
		if (i+1)%per == 0 {
			w.flush()
		}
	}
	if end {
		w.end(StreamEnd{Type: "end", Requests: len(rs)})
	} else {
		w.flush()
	}
	return buf.Bytes()
}

// A stream cut anywhere reads back every result of the blocks before the
// cut, says it was truncated (unless the cut fell between blocks: then it
// is a run interrupted with nothing damaged), and is no error.
func TestCompactCutAnywhereKeepsWholeBlocks(t *testing.T) {
	rs := randomResults(rand.New(rand.NewPCG(3, 3)), 40)
	full := compactBytes(t, rs, 10, true)
	// the offsets where each block ends, from whole streams of 10, 20, ...
	ends := map[int]int{} // stream length → results in it
	for k := 0; k <= 40; k += 10 {
		ends[len(compactBytes(t, rs[:k], 10, false))] = k
	}
	headerEnd := len(compactBytes(t, nil, 10, false))
	for cut := headerEnd; cut < len(full); cut++ {
		rec, err := ReadStream(bytes.NewReader(full[:cut]))
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		whole := 0
		for l, k := range ends {
			if l <= cut && k > whole {
				whole = k
			}
		}
		_, atBoundary := ends[cut]
		if len(rec.Results) != whole || rec.End != nil || rec.Truncated == atBoundary {
			t.Fatalf("cut at %d: %d results (want %d), end %v, truncated %v", cut, len(rec.Results), whole, rec.End, rec.Truncated)
		}
		if !reflect.DeepEqual(rec.Results, normal(rs[:whole])) {
			t.Fatalf("cut at %d: the results differ", cut)
		}
	}
	for cut := 0; cut < headerEnd; cut++ {
		if _, err := ReadStream(bytes.NewReader(full[:cut])); err == nil || !strings.Contains(err.Error(), "not a ratecheck results file") {
			t.Fatalf("cut at %d, inside the header: %v", cut, err)
		}
	}
}

// Damage before the last block is an error that says where; damage in the
// last block is a cut tail.
func TestCompactCorruptionSaysWhere(t *testing.T) {
	rs := randomResults(rand.New(rand.NewPCG(4, 4)), 30)
	full := compactBytes(t, rs, 10, false)
	first := len(compactBytes(t, nil, 10, false)) // the first results block
	bad := bytes.Clone(full)
	bad[first+12] ^= 0x40
	_, err := ReadStream(bytes.NewReader(bad))
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != int64(first) || ce.Result != 1 || !strings.Contains(err.Error(), "byte ") {
		t.Fatalf("damage in the first block: %v", err)
	}
	bad = bytes.Clone(full)
	bad[len(bad)-3] ^= 0x40
	rec, err := ReadStream(bytes.NewReader(bad))
	if err != nil || !rec.Truncated || len(rec.Results) != 20 {
		t.Fatalf("damage in the last block: %v, truncated %v, %d results", err, rec != nil && rec.Truncated, len(rec.Results))
	}
}

// A run abandoned without Close (killed) leaves a stream that reads back
// at least every result flushed before, whatever its name says.
func TestCompactAbandonedStreamKeepsFlushed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.rcs")
	rs := randomResults(rand.New(rand.NewPCG(5, 5)), 5000)
	writeStream(t, path, StreamHeader{Command: "attack", Profile: "steady"}, rs, false) // never closed
	// The flush is due streamFlushEvery after the last write; a loaded
	// machine may run the flusher late, so wait for it up to a deadline.
	renamed := filepath.Join(dir, "run.jsonl") // sniffed, not named
	var rec *Recorded
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(streamFlushEvery) {
		b, _ := os.ReadFile(path)
		os.WriteFile(renamed, b, 0o644)
		var err error
		if rec, err = ReadStreamFile(renamed); err != nil {
			t.Fatal(err)
		}
		if len(rec.Results) == len(rs) || time.Now().After(deadline) {
			break
		}
	}
	if rec.End != nil || len(rec.Results) != len(rs) || !reflect.DeepEqual(rec.Results, normal(rs)) {
		t.Fatalf("read back %d of %d flushed results (end %v)", len(rec.Results), len(rs), rec.End)
	}
}

// The format follows the name: .rcs (any case) is compact.
func TestFormatOf(t *testing.T) {
	for path, want := range map[string]Format{"a.rcs": Compact, "dir/A.RCS": Compact, "a.jsonl": JSONLines, "/dev/stdout": JSONLines, "rcs": JSONLines} {
		if got := FormatOf(path); got != want {
			t.Errorf("FormatOf(%q) = %v, want %v", path, got, want)
		}
	}
}

// The decoder never panics and never reads past what it was given,
// whatever the bytes.
func FuzzReadCompact(f *testing.F) {
	rs := randomResults(rand.New(rand.NewPCG(6, 6)), 12)
	for _, s := range [][]byte{compactBytes(f, rs, 4, true), compactBytes(f, rs[:3], 1, false), compactBytes(f, nil, 1, true)} {
		f.Add(s)
		f.Add(s[:len(s)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sr, err := NewStreamReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		var r Result
		for n := 0; sr.NextInto(&r); n++ {
			if n > len(b) {
				t.Fatalf("%d results from %d bytes", n, len(b))
			}
		}
	})
}
