package report

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// The charts of the HTML report are computed here as lists of SVG shapes
// with their coordinates already formatted; htmlchart.go only turns them
// into nodes, whose text and attribute values html.Render escapes, so no
// text from a results file reaches the page unescaped and the geometry is
// testable without a browser.

// shape is one SVG element.
type shape struct {
	Kind  string // circle, rect, path, line, text
	Class string
	ID    string
	// Geometry, formatted: circle cx cy r; rect x y w h; line x1 y1 x2 y2;
	// text x y; path d.
	X, Y, X2, Y2, W, H, R, D string
	Text                     string
	Anchor                   string // text-anchor
	Title                    string // tooltip
	// Seq and Outcome mark a request's point (data-seq, data-outcome).
	Seq     int
	Outcome string
}

// chart is one SVG figure.
type chart struct {
	W, H   int
	Label  string // aria-label
	Class  string
	Points int // request points drawn (timeline)
	Shapes []shape
	Note   string // a sentence under the chart
}

// Chart geometry.
const (
	chartW     = 1180
	padLeft    = 96
	padRight   = 16
	padTop     = 14
	padBottom  = 34
	maxPoints  = 4000 // beyond, the timeline draws an even sample
	pointR     = 3.2
	pointHalf  = 3.0 // half the side of a rejected square
	minLinePx  = 2.0 // a latency line shorter than this is not drawn
	maxBins    = 80
	targetBins = 50
)

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// niceStep is the 1-2-5 step that cuts span into about n parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n <= 0 {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// fmtSeconds writes a time axis label.
func fmtSeconds(s float64) string {
	switch {
	case s == 0:
		return "0"
	case math.Abs(s) < 1:
		return strconv.FormatFloat(s*1000, 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(s, 'f', -1, 64) + " s"
}

// fmtDur writes a duration for people: 850 µs, 12.3 ms, 1.25 s.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d/time.Microsecond)
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// timeAxis adds the x axis of a time chart: ticks, grid and labels.
func timeAxis(shapes []shape, x func(float64) float64, tmax float64, top, bottom float64) []shape {
	step := niceStep(tmax, 10)
	for t := 0.0; t <= tmax+step/1e6; t += step {
		xx := f1(x(t))
		shapes = append(shapes,
			shape{Kind: "line", Class: "grid", X: xx, Y: f1(top), X2: xx, Y2: f1(bottom)},
			shape{Kind: "text", Class: "tick", X: xx, Y: f1(bottom + 14), Text: fmtSeconds(math.Round(t*1e6) / 1e6), Anchor: "middle"})
	}
	shapes = append(shapes, shape{Kind: "line", Class: "axis", X: f1(x(0)), Y: f1(bottom), X2: f1(x(tmax)), Y2: f1(bottom)})
	return shapes
}

// timeline draws every request: x is the send time, y the send order; an
// admitted request is a circle, a rejected one a square, a transport error
// a triangle, any other status a diamond, and a line runs from the send to
// the first byte where the wait is visible (queueing shows as long lines).
func timeline(runIdx int, rs []results.Result) chart {
	n := len(rs)
	c := chart{W: chartW, Class: "timeline", Label: fmt.Sprintf("timeline of %d requests", n)}
	if n == 0 {
		c.H = 60
		c.Note = "no request was recorded"
		return c
	}
	ph := math.Min(math.Max(float64(n)*3, 140), 420)
	c.H = int(ph) + padTop + padBottom
	tmax := 0.0
	for i := range rs {
		tmax = math.Max(tmax, endOf(&rs[i]).Seconds())
	}
	tmax = math.Max(tmax*1.01, 0.001)
	pw := float64(chartW - padLeft - padRight)
	x := func(s float64) float64 { return padLeft + s/tmax*pw }
	top, bottom := float64(padTop), float64(padTop)+ph
	y := func(i int) float64 { return top + (float64(i)+0.5)*ph/float64(n) }
	var sh []shape
	// Phase bands: consecutive requests of one phase, labelled at the left.
	type band struct {
		phase       string
		first, last int
		t0, t1      float64
	}
	var bands []band
	for i := range rs {
		r := &rs[i]
		if len(bands) > 0 && bands[len(bands)-1].phase == r.Phase {
			b := &bands[len(bands)-1]
			b.last, b.t1 = i, math.Max(b.t1, endOf(r).Seconds())
			continue
		}
		bands = append(bands, band{phase: r.Phase, first: i, last: i, t0: r.Sent.Seconds(), t1: endOf(r).Seconds()})
	}
	if len(bands) <= 30 {
		lastLabel := -100.0
		for k, b := range bands {
			y0, y1 := top+float64(b.first)*ph/float64(n), top+float64(b.last+1)*ph/float64(n)
			sh = append(sh, shape{Kind: "rect", Class: fmt.Sprintf("band band%d", k%2), X: f1(x(b.t0) - 4), Y: f1(y0),
				W: f1(math.Max(x(b.t1)-x(b.t0)+8, 8)), H: f1(math.Max(y1-y0, 1)),
				Title: fmt.Sprintf("phase %s: requests %d–%d of %d", orDash(b.phase), b.first+1, b.last+1, n)})
			if ly := (y0+y1)/2 + 4; ly-lastLabel >= 12 && b.phase != "" {
				sh = append(sh, shape{Kind: "text", Class: "phase", X: f1(padLeft - 6), Y: f1(ly), Text: b.phase, Anchor: "end"})
				lastLabel = ly
			}
		}
	}
	sh = timeAxis(sh, x, tmax, top, bottom)
	sh = append(sh, shape{Kind: "text", Class: "axis-label", X: f1(x(tmax)), Y: f1(bottom + 28), Text: "send time →", Anchor: "end"})
	stride := 1
	if n > maxPoints {
		stride = (n + maxPoints - 1) / maxPoints
		c.Note = fmt.Sprintf("%d requests: one in %d of each outcome is drawn; the counts above include all of them", n, stride)
	}
	// Sample within each outcome, so a pattern in the run (a limiter
	// admitting every other request) cannot alias into one colour.
	drawn := make([]bool, n)
	seen := map[string]int{}
	for i := range rs {
		o := outcomeOf(&rs[i])
		drawn[i] = seen[o]%stride == 0
		seen[o]++
	}
	// Latency lines first, under the points.
	for i := range n {
		if !drawn[i] {
			continue
		}
		r := &rs[i]
		end := r.FirstByte
		if end <= 0 {
			end = r.Done
		}
		x1, x2 := x(r.Sent.Seconds()), x(end.Seconds())
		if x2-x1 >= minLinePx {
			sh = append(sh, shape{Kind: "line", Class: "wait w-" + outcomeOf(r), X: f1(x1), Y: f1(y(i)), X2: f1(x2), Y2: f1(y(i))})
		}
	}
	for i := range n {
		if !drawn[i] {
			continue
		}
		r := &rs[i]
		px, py := x(r.Sent.Seconds()), y(i)
		p := shape{Class: "pt p-" + outcomeOf(r), ID: fmt.Sprintf("r%d-s%d", runIdx, r.Seq), Seq: r.Seq, Outcome: outcomeOf(r), Title: pointTitle(r)}
		switch p.Outcome {
		case outAdmitted:
			p.Kind, p.X, p.Y, p.R = "circle", f1(px), f1(py), f1(pointR)
		case outRejected:
			p.Kind, p.X, p.Y, p.W, p.H = "rect", f1(px-pointHalf), f1(py-pointHalf), f1(2*pointHalf), f1(2*pointHalf)
		case outError:
			p.Kind, p.D = "path", fmt.Sprintf("M%s %sL%s %sL%s %sZ", f1(px), f1(py-4), f1(px+4), f1(py+3), f1(px-4), f1(py+3))
		default:
			p.Kind, p.D = "path", fmt.Sprintf("M%s %sL%s %sL%s %sL%s %sZ", f1(px), f1(py-4), f1(px+4), f1(py), f1(px), f1(py+4), f1(px-4), f1(py))
		}
		sh = append(sh, p)
		c.Points++
	}
	c.Shapes = sh
	return c
}

func endOf(r *results.Result) time.Duration { return max(r.Done, r.FirstByte, r.Sent) }

func pointTitle(r *results.Result) string {
	s := fmt.Sprintf("#%d", r.Seq)
	if r.Phase != "" {
		s += " " + r.Phase
	}
	if r.Client > 0 {
		s += fmt.Sprintf(" client %d", r.Client)
	}
	if r.Key != "" {
		s += " key " + r.Key
	}
	if r.Error != "" {
		return s + fmt.Sprintf(" · sent %.4f s · error: %s", r.Sent.Seconds(), r.Error)
	}
	s += fmt.Sprintf(" · %d · sent %.4f s · latency %s", r.Status, r.Sent.Seconds(), fmtDur(r.Latency()))
	if ra := r.Headers["retry-after"]; ra != "" {
		s += " · Retry-After " + ra
	}
	return s
}

// replayModel replays the model the inference names over the run's
// requests exactly as the inference's fit does (probe.Replay), so the chart
// shows what the inference scored.
func replayModel(run *Run) (probe.Replayed, error) {
	if run.Inference == nil {
		return probe.Replayed{}, fmt.Errorf("no inference")
	}
	cfg, err := run.Inference.Model()
	if err != nil {
		return probe.Replayed{}, err
	}
	start := run.Start
	if start.IsZero() {
		start = time.Unix(0, 0)
	}
	return probe.Replay(&probe.Observation{Start: start, Results: run.Results, RTT: run.RTT}, cfg)
}

// modelText names a model with its parameters.
func modelText(c limiter.Config) string {
	switch c.Algo {
	case limiter.TokenBucket:
		if c.RefillEvery > 0 {
			return fmt.Sprintf("token_bucket rate %s burst %d refilled every %s", limiter.FormatRate(c.Rate), c.Burst, c.RefillEvery)
		}
		return fmt.Sprintf("token_bucket rate %s burst %d", limiter.FormatRate(c.Rate), c.Burst)
	case limiter.LeakyShaping:
		return fmt.Sprintf("leaky_shaping rate %s burst %d delay %d", limiter.FormatRate(c.Rate), c.Burst, c.DelayAfter)
	case limiter.FixedWindow:
		return fmt.Sprintf("fixed_window limit %d window %s (%s-aligned)", c.Limit, c.Window, c.Align)
	case limiter.SlidingLog, limiter.SlidingCounter:
		return fmt.Sprintf("%s limit %d window %s", c.Algo, c.Limit, c.Window)
	case limiter.Concurrency:
		return fmt.Sprintf("concurrency max-inflight %d", c.MaxInflight)
	case limiter.Tiers:
		return fmt.Sprintf("tiers mode %s: %s and %s", c.TierMode, c.Tiers[0], c.Tiers[1])
	}
	return c.Algo
}

// intervals draws admitted (and rejected, stacked above) requests per time
// interval by send time, with the inferred model's admissions on the same
// arrivals drawn over them as a step line, and the model's sustained
// capacity per interval as a dashed line.
func intervals(run *Run) chart {
	rs := run.Results
	c := chart{W: chartW, H: 220 + padTop + padBottom, Class: "intervals"}
	if len(rs) == 0 {
		c.H = 60
		c.Note = "no request was recorded"
		return c
	}
	tmax := 0.0
	for i := range rs {
		tmax = math.Max(tmax, rs[i].Sent.Seconds())
	}
	tmax = math.Max(tmax, 0.001)
	bin := niceStep(tmax, targetBins)
	nb := int(math.Floor(tmax/bin)) + 1
	for nb > maxBins {
		bin = niceStep(bin*float64(nb)/targetBins*1.01, 1)
		nb = int(math.Floor(tmax/bin)) + 1
	}
	c.Label = fmt.Sprintf("requests per %s interval", fmtSeconds(bin))
	adm, rej, oth, model := make([]int, nb), make([]int, nb), make([]int, nb), make([]int, nb)
	binOf := func(r *results.Result) int { return min(int(r.Sent.Seconds()/bin), nb-1) }
	for i := range rs {
		b := binOf(&rs[i])
		switch outcomeOf(&rs[i]) {
		case outAdmitted:
			adm[b]++
		case outRejected:
			rej[b]++
		default:
			oth[b]++
		}
	}
	var cfg limiter.Config
	haveModel := false
	explained, decided := 0, 0
	if rp, err := replayModel(run); err == nil {
		cfg, haveModel = rp.Config, true
		explained, decided = rp.Explained(), len(rp.Requests)
		for _, q := range rp.Requests {
			if q.Admitted {
				model[binOf(&rs[q.Index])]++
			}
		}
	}
	ymax := 1
	for b := range nb {
		ymax = max(ymax, adm[b]+rej[b]+oth[b], model[b])
	}
	capPer := 0.0
	if haveModel {
		switch cfg.Algo {
		case limiter.TokenBucket, limiter.LeakyShaping:
			capPer = cfg.Rate * bin
		case limiter.FixedWindow, limiter.SlidingLog, limiter.SlidingCounter:
			capPer = float64(cfg.Limit) * bin / cfg.Window.Seconds()
		}
	}
	ph := 220.0
	top, bottom := float64(padTop), float64(padTop)+ph
	pw := float64(chartW - padLeft - padRight)
	span := float64(nb) * bin
	x := func(s float64) float64 { return padLeft + s/span*pw }
	y := func(v float64) float64 { return bottom - v/float64(ymax)*ph }
	var sh []shape
	ystep := math.Max(1, niceStep(float64(ymax), 5))
	for v := 0.0; v <= float64(ymax)+1e-9; v += ystep {
		sh = append(sh, shape{Kind: "line", Class: "grid", X: f1(padLeft), Y: f1(y(v)), X2: f1(x(span)), Y2: f1(y(v))},
			shape{Kind: "text", Class: "tick", X: f1(padLeft - 6), Y: f1(y(v) + 4), Text: strconv.Itoa(int(v)), Anchor: "end"})
	}
	sh = timeAxis(sh, x, span, top, bottom)
	bw := math.Max(pw/float64(nb)-1, 1)
	for b := range nb {
		x0 := x(float64(b) * bin)
		title := fmt.Sprintf("%s – %s: %d admitted, %d rejected", fmtSeconds(round6(float64(b)*bin)), fmtSeconds(round6(float64(b+1)*bin)), adm[b], rej[b])
		if oth[b] > 0 {
			title += fmt.Sprintf(", %d errors or other statuses", oth[b])
		}
		if haveModel {
			title += fmt.Sprintf("; the model admits %d", model[b])
		}
		stack := []struct {
			n     int
			class string
		}{{adm[b], "bar b-admitted"}, {rej[b], "bar b-rejected"}, {oth[b], "bar b-other"}}
		base := 0
		for _, s := range stack {
			if s.n == 0 {
				continue
			}
			sh = append(sh, shape{Kind: "rect", Class: s.class, X: f1(x0 + 0.5), Y: f1(y(float64(base + s.n))), W: f1(bw), H: f1(y(float64(base)) - y(float64(base+s.n))), Title: title})
			base += s.n
		}
	}
	if haveModel {
		d := ""
		for b := range nb {
			x0, x1, yy := x(float64(b)*bin), x(float64(b+1)*bin), y(float64(model[b]))
			if b == 0 {
				d += fmt.Sprintf("M%s %s", f1(x0), f1(yy))
			} else {
				d += fmt.Sprintf("V%s", f1(yy))
			}
			d += fmt.Sprintf("H%s", f1(x1))
		}
		sh = append(sh, shape{Kind: "path", Class: "model", D: d, Title: "model: " + modelText(cfg)})
		if capPer > 0 && capPer <= float64(ymax) {
			sh = append(sh, shape{Kind: "line", Class: "capacity", X: f1(padLeft), Y: f1(y(capPer)), X2: f1(x(span)), Y2: f1(y(capPer)),
				Title: fmt.Sprintf("sustained capacity: %.2f per interval", capPer)})
		}
		c.Note = fmt.Sprintf("Model: %s, replayed on the observed arrivals (send + RTT/2) as the inference scores it (a burst's order at the server is unknowable, and timing is known to a round trip); it explains %d of %d decisions.", modelText(cfg), explained, decided)
		if capPer > 0 {
			c.Note += fmt.Sprintf(" Dashed: its sustained capacity, %.2f per %s interval.", capPer, fmtSeconds(bin))
		}
	}
	sh = append(sh, shape{Kind: "text", Class: "axis-label", X: f1(x(span)), Y: f1(bottom + 28), Text: "send time →", Anchor: "end"})
	c.Shapes = sh
	return c
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// latencyChart draws the latency distribution in power-of-two bins, each
// bar split by outcome.
func latencyChart(rs []results.Result) chart {
	c := chart{W: chartW, H: 180 + padTop + padBottom + 10, Class: "latency", Label: "latency distribution"}
	type bin struct{ adm, rej, oth int }
	bins := map[int]*bin{} // by log2 of the upper bound in µs
	lo, hi := math.MaxInt32, -1
	for i := range rs {
		r := &rs[i]
		if r.Error != "" {
			continue
		}
		us := max(int64(r.Latency()/time.Microsecond), 1)
		k := 0
		for int64(1)<<k < us {
			k++
		}
		b := bins[k]
		if b == nil {
			b = &bin{}
			bins[k] = b
		}
		switch outcomeOf(r) {
		case outAdmitted:
			b.adm++
		case outRejected:
			b.rej++
		default:
			b.oth++
		}
		lo, hi = min(lo, k), max(hi, k)
	}
	if hi < 0 {
		c.H = 60
		c.Note = "no response was received"
		return c
	}
	n := hi - lo + 1
	ymax := 1
	for _, b := range bins {
		ymax = max(ymax, b.adm+b.rej+b.oth)
	}
	ph := 180.0
	bottom := float64(padTop) + ph
	pw := float64(chartW - padLeft - padRight)
	slot := pw / float64(max(n, 8))
	y := func(v float64) float64 { return bottom - v/float64(ymax)*ph }
	var sh []shape
	ystep := math.Max(1, niceStep(float64(ymax), 5))
	for v := 0.0; v <= float64(ymax)+1e-9; v += ystep {
		sh = append(sh, shape{Kind: "line", Class: "grid", X: f1(padLeft), Y: f1(y(v)), X2: f1(padLeft + slot*float64(n)), Y2: f1(y(v))},
			shape{Kind: "text", Class: "tick", X: f1(padLeft - 6), Y: f1(y(v) + 4), Text: strconv.Itoa(int(v)), Anchor: "end"})
	}
	sh = append(sh, shape{Kind: "line", Class: "axis", X: f1(padLeft), Y: f1(bottom), X2: f1(padLeft + slot*float64(n)), Y2: f1(bottom)})
	for k := lo; k <= hi; k++ {
		x0 := padLeft + slot*float64(k-lo)
		upTo := time.Duration(int64(1)<<k) * time.Microsecond
		label := "≤ " + fmtDur(upTo)
		sh = append(sh, shape{Kind: "text", Class: "tick", X: f1(x0 + slot/2), Y: f1(bottom + 14), Text: label, Anchor: "middle"})
		b := bins[k]
		if b == nil {
			continue
		}
		title := fmt.Sprintf("%s – %s: %d admitted, %d rejected", fmtDur(upTo/2), fmtDur(upTo), b.adm, b.rej)
		if b.oth > 0 {
			title += fmt.Sprintf(", %d other", b.oth)
		}
		base := 0
		for _, s := range []struct {
			n     int
			class string
		}{{b.adm, "bar b-admitted"}, {b.rej, "bar b-rejected"}, {b.oth, "bar b-other"}} {
			if s.n == 0 {
				continue
			}
			sh = append(sh, shape{Kind: "rect", Class: s.class, X: f1(x0 + slot*0.1), Y: f1(y(float64(base + s.n))), W: f1(slot * 0.8), H: f1(y(float64(base)) - y(float64(base+s.n))), Title: title})
			base += s.n
		}
	}
	sh = append(sh, shape{Kind: "text", Class: "axis-label", X: f1(padLeft + slot*float64(n)), Y: f1(bottom + 30), Text: "latency (send to last byte) →", Anchor: "end"})
	c.Shapes = sh
	return c
}
