// Command streamgen writes a synthetic attack's results stream for
// bench/run.sh to time `ratecheck report` on: N results shaped like a
// steady attack at full speed against a limiter that speaks every header
// family (sends every 50 µs over 50 connections, answered in ~100 µs,
// completing slightly out of order, a quarter rejected, counters and Date
// changing as a real limiter's do), through results.Stream as attack
// writes them. The format follows the name (.rcs: compact).
//
//	streamgen -n 10000000 -out run.rcs              one stream
//	streamgen -n 10000000 -shards 4 -out run.rcs    run-1.rcs … run-4.rcs, the shards of one run
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

func main() {
	n := flag.Int("n", 1_000_000, "results to write in all")
	shards := flag.Int("shards", 1, "split them round robin into this many shards of one run")
	out := flag.String("out", "synthetic.rcs", "the stream (with -shards, NAME-K.EXT each)")
	flag.Parse()
	if err := write(*n, *shards, *out); err != nil {
		fmt.Fprintln(os.Stderr, "streamgen:", err)
		os.Exit(1)
	}
}

// interval is the plan's spacing of sends: 20,000/s.
const interval = 50 * time.Microsecond

func write(n, shards int, out string) error {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	streams := make([]*results.Stream, shards)
	for k := range streams {
		h := results.StreamHeader{Command: "attack", Target: "bench:synthetic", URL: "http://127.0.0.1:9/", Profile: "steady", Start: start,
			Options: map[string]string{"rate": "20000/s"}}
		path := out
		if shards > 1 {
			ext := filepath.Ext(out)
			path = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(out, ext), k+1, ext)
			h.RunID, h.Shard, h.StartAt, h.BeganAt = "streamgen", &results.Shard{K: k + 1, N: shards}, start, start
		}
		s, err := results.CreateStream(path, h)
		if err != nil {
			return err
		}
		streams[k] = s
	}
	rng := rand.New(rand.NewPCG(9, 9))
	const limit, epoch = 100, int64(1796514249)
	for i := range n {
		r := &results.Result{Phase: "steady", Seq: i + 1 + rng.IntN(8) - 4, Conn: int64(1 + rng.IntN(50)), Scheduled: time.Duration(i) * interval}
		r.Sent = r.Scheduled + time.Duration(rng.IntN(20000))
		r.FirstByte = r.Sent + 80*time.Microsecond + time.Duration(rng.IntN(60000))
		r.Done = r.FirstByte + time.Duration(rng.IntN(30000))
		sec := epoch + int64(r.Scheduled/time.Second)
		remaining := limit - 1 - i%limit
		r.Status = 200
		if rng.IntN(4) == 0 {
			r.Status, remaining, r.Body = 429, 0, "Too Many Requests\n"
		}
		r.Headers = map[string]string{
			"content-type":          "text/plain; charset=utf-8",
			"date":                  time.Unix(sec, 0).UTC().Format(time.RFC1123),
			"ratelimit":             `"default";r=` + strconv.Itoa(remaining) + ";t=1",
			"ratelimit-policy":      `"default";q=100;w=1`,
			"x-ratelimit-limit":     "100",
			"x-ratelimit-remaining": strconv.Itoa(remaining),
			"x-ratelimit-reset":     strconv.FormatInt(sec+1, 10),
		}
		streams[i%shards].Add(r)
	}
	span := time.Duration(n) * interval
	for _, s := range streams {
		m := results.SteadyMetrics{TargetRate: 20000 / float64(shards), Span: span, Planned: span}
		s.Conclude(results.Report{Profile: "steady", Verdict: "synthetic", Rows: [][]string{{"target rate", m.Report(span, results.Summary{}).Rows[0][1]}},
			Metrics: results.ProfileMetrics{Steady: &m}})
		if err := s.Close(nil, span); err != nil {
			return err
		}
	}
	return nil
}
