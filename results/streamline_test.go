package results

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// appendResultLine writes exactly what encoding/json writes for a result
// line, for plain values and for every kind of string encoding/json
// escapes (quotes, backslashes, control bytes, HTML characters, non-ASCII,
// U+2028, invalid UTF-8), empty and absent fields, and header maps (sorted
// by name).
func TestAppendResultLineMatchesEncodingJSON(t *testing.T) {
	texts := []string{"", "steady", "key-7", "127.0.0.2", `say "no"`, `C:\path`, "<b>&amp;</b>", "<p>", "a>b", "x&y",
		"tab\there\nnewline\r", "\x00\x01\x1f\x7f", "\b\f", "café", "line\u2028sep\u2029", "bad \xff\xfe utf-8",
		"timeout waiting for 127.0.0.1:8080", "emoji 🚦"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return texts[rng.IntN(len(texts))] }
	results := []*Result{{}, {Seq: 1, Scheduled: -5, Sent: 1<<62 + 3, FirstByte: 0, Done: 7}}
	for i := range 2000 {
		r := &Result{
			Seq: i, Phase: pick(), Client: rng.IntN(3) - 1, Key: pick(), Source: pick(), Conn: rng.Int64N(3),
			Scheduled: time.Duration(rng.Int64()), Sent: time.Duration(rng.Int64N(1e12)),
			FirstByte: time.Duration(rng.Int64N(1e12)), Done: time.Duration(-rng.Int64N(1e3)),
			Status: []int{0, 200, 429, 503}[rng.IntN(4)], Error: pick(), Body: pick(),
		}
		switch rng.IntN(3) {
		case 1:
			r.Headers = map[string]string{}
		case 2:
			r.Headers = map[string]string{}
			for range 1 + rng.IntN(5) {
				r.Headers[pick()] = pick()
			}
		}
		results = append(results, r)
	}
	var line []byte
	for _, r := range results {
		want, err := json.Marshal(resultLine{Type: "result", Result: r})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		line = appendResultLine(line[:0], r)
		if string(line) != string(want) {
			t.Fatalf("result %+v:\n got %s\nwant %s", r, line, want)
		}
	}
}
