package results

import (
	"bytes"
	"path/filepath"
	"testing"
)

// The compact stream's costs per result, on results shaped like a
// max-throughput attack (synthetic_test.go): b.N results per run, so ns/op
// is per result; "B/result" is the stream's size.

func BenchmarkEncodeCompact(b *testing.B) {
	var size countingWriter
	w := newCompactWriter(&size)
	w.header(StreamHeader{Type: "header"})
	benchEncode(b, w)
	b.ReportMetric(float64(size)/float64(b.N), "B/result")
}

func BenchmarkEncodeJSONLines(b *testing.B) {
	var size countingWriter
	w := newJSONLWriter(&size)
	benchEncode(b, w)
	b.ReportMetric(float64(size)/float64(b.N), "B/result")
}

// benchEncode times w's encoding of b.N synthetic results, made ahead in
// batches outside the timer.
func benchEncode(b *testing.B, w recordWriter) {
	const batch = 4096
	rs := make([]Result, batch)
	for i := range rs {
		rs[i].Headers = map[string]string{}
	}
	g := newSynthetic()
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		b.StopTimer()
		n := min(batch, b.N-done)
		for i := range n {
			g.next(&rs[i])
		}
		b.StartTimer()
		for i := range n {
			w.result(&rs[i])
		}
		done += n
	}
	w.end(StreamEnd{Type: "end"})
	w.flush()
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// streamOf is a stream of n synthetic results in memory.
func streamOf(b *testing.B, name string, n int) []byte {
	b.Helper()
	path := filepath.Join(b.TempDir(), name)
	writeSynthetic(b, path, n)
	data, err := readAll(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func benchDecode(b *testing.B, name string) {
	data := streamOf(b, name, b.N)
	b.SetBytes(int64(len(data) / max(b.N, 1)))
	b.ReportAllocs()
	b.ResetTimer()
	sr, err := NewStreamReader(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	var r Result
	n := 0
	for sr.NextInto(&r) {
		n++
	}
	if sr.Err() != nil || n != b.N {
		b.Fatalf("%d of %d read: %v", n, b.N, sr.Err())
	}
}

func BenchmarkDecodeCompact(b *testing.B)   { benchDecode(b, "s.rcs") }
func BenchmarkDecodeJSONLines(b *testing.B) { benchDecode(b, "s.jsonl") }

// BenchmarkDigestCompact is the report's whole reading path: decode,
// aggregate into the HDR metrics, sample.
func BenchmarkDigestCompact(b *testing.B) {
	data := streamOf(b, "s.rcs", b.N)
	b.ReportAllocs()
	b.ResetTimer()
	d, err := DigestStream(bytes.NewReader(data))
	if err != nil || d.Summary.Requests != b.N {
		b.Fatalf("%v, %+v", err, d)
	}
}
