package results

import (
	"bufio"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// maxThroughputResults calls f with n results shaped like a steady attack
// at full speed against a limiter that speaks every header family (what
// `attack --rate 20000/s builtin:token_bucket?...` records): 50
// connections, sends every 50 µs answered in ~100 µs, completing slightly
// out of order, a quarter rejected, the counters and Date changing as a
// real limiter's do. r is reused between calls.
func maxThroughputResults(n int, f func(r *Result)) {
	g := newSynthetic()
	r := Result{Headers: map[string]string{}}
	for range n {
		g.next(&r)
		f(&r)
	}
}

// synthetic makes those results one at a time.
type synthetic struct {
	rng *rand.Rand
	i   int
}

func newSynthetic() *synthetic { return &synthetic{rng: rand.New(rand.NewPCG(9, 9))} }

// next fills r (whose Headers must be a map) with the next result.
func (g *synthetic) next(r *Result) {
	const limit = 100
	const epoch = int64(1796514249)
	rng, i := g.rng, g.i
	g.i++
	r.Phase = "steady"
	r.Seq = i + 1 + rng.IntN(8) - 4
	r.Conn = int64(1 + rng.IntN(50))
	r.Scheduled = time.Duration(i) * 50 * time.Microsecond
	r.Sent = r.Scheduled + time.Duration(rng.IntN(20000))
	r.FirstByte = r.Sent + 80*time.Microsecond + time.Duration(rng.IntN(60000))
	r.Done = r.FirstByte + time.Duration(rng.IntN(30000))
	sec := epoch + int64(r.Scheduled/time.Second)
	remaining := limit - 1 - i%limit
	r.Status, r.Body = 200, ""
	if rng.IntN(4) == 0 {
		r.Status, remaining, r.Body = 429, 0, "Too Many Requests\n"
	}
	h := r.Headers
	h["content-type"] = "text/plain; charset=utf-8"
	h["date"] = time.Unix(sec, 0).UTC().Format(time.RFC1123)
	h["ratelimit"] = `"default";r=` + strconv.Itoa(remaining) + ";t=1"
	h["ratelimit-policy"] = `"default";q=100;w=1`
	h["x-ratelimit-limit"] = "100"
	h["x-ratelimit-remaining"] = strconv.Itoa(remaining)
	h["x-ratelimit-reset"] = strconv.FormatInt(sec+1, 10)
}

// writeSynthetic writes n such results to path in the format its name asks
// for, with a header and an end record, as a Stream would, but without its
// goroutine (faster for a large file).
func writeSynthetic(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var w recordWriter = newJSONLWriter(bw)
	if FormatOf(path) == Compact {
		w = newCompactWriter(bw)
	}
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(w.header(StreamHeader{Type: "header", Schema: StreamSchema, Tool: "ratecheck", Command: "attack", Profile: "steady", URL: "http://127.0.0.1:1/"}))
	maxThroughputResults(n, func(r *Result) { must(w.result(r)) })
	must(w.end(StreamEnd{Type: "end", Requests: n}))
	must(w.flush())
	must(bw.Flush())
	must(f.Close())
}

func readAll(path string) ([]byte, error) { return os.ReadFile(path) }
