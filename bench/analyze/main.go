// Command analyze is bench/run.sh's arithmetic: it turns the sink's arrival
// lists and the tools' JSON reports into numbers, and the collected numbers
// into the final table. It exists so run.sh needs neither jq nor python.
//
//	analyze arrivals [-rate R] < arrivals.json
//	    sink arrivals (a JSON array of ns offsets) -> key=value lines:
//	    count, first_ns, last_ns, span_ns (= spread_ns), rate_per_s
//	    ((count-1)/span) and, with -rate, sched_p50_ns / sched_p99_ns /
//	    sched_max_ns: the schedule error |a_i - i/R - offset| where a_i is
//	    the i-th arrival in time order and offset the median of a_i - i/R.
//	analyze decompose -results FILE -sink-start T < arrivals.json
//	    split a ratecheck run's timing error in two, pairing the i-th
//	    arrival with the i-th send (both in time order): late = sent -
//	    scheduled (ratecheck's own pacing error, from its results file) and
//	    transit = arrival - sent (from ratecheck's send stamp to the sink's
//	    read: the write, the kernel, and the sink's wake-up). T is the
//	    sink's start (GET /info); the results header gives ratecheck's.
//	analyze get PATH... < doc.json
//	    print each dotted PATH (e.g. summary.requests) of a JSON document.
//	analyze median
//	    median of the numbers on stdin (one a line).
//	analyze table FILE
//	    the final table from FILE's tab-separated lines:
//	      m <key> <label> <unit> <bar>   declare a metric (in print order)
//	      v <key> <tool> <value>         one observation (median taken)
//	    unit is one of: rps, us, ms, MB, n. bar is "-" or a comma-separated
//	    list of "<=X", "<X", ">=X", "~T±P%" (within P percent of T), in the
//	    metric's unit, or "<=KxTOOL", "<KxTOOL", ">=KxTOOL" (ratecheck's
//	    figure against K times TOOL's in the same run). Only ratecheck's
//	    figure is judged. Tools other than ratecheck and vegeta (wrk) get
//	    a column and a ratio column of their own when they have a figure.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "arrivals":
		err = arrivals(os.Args[2:])
	case "decompose":
		err = decompose(os.Args[2:])
	case "get":
		err = get(os.Args[2:])
	case "median":
		err = medianCmd()
	case "table":
		if len(os.Args) != 3 {
			usage()
		}
		err = table(os.Args[2])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "analyze:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: analyze arrivals [-rate R] | decompose -results FILE -sink-start T | get PATH... | median | table FILE")
	os.Exit(2)
}

func arrivals(args []string) error {
	fs := flag.NewFlagSet("arrivals", flag.ExitOnError)
	rate := fs.Float64("rate", 0, "nominal rate (requests/s) for the schedule error")
	_ = fs.Parse(args)
	var a []int64
	if err := json.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<20)).Decode(&a); err != nil {
		return fmt.Errorf("arrivals: %w", err)
	}
	fmt.Printf("count=%d\n", len(a))
	if len(a) == 0 {
		return nil
	}
	slices.Sort(a)
	first, last := a[0], a[len(a)-1]
	span := last - first
	fmt.Printf("first_ns=%d\nlast_ns=%d\nspan_ns=%d\nspread_ns=%d\n", first, last, span, span)
	if span > 0 {
		fmt.Printf("rate_per_s=%.3f\n", float64(len(a)-1)/(float64(span)/1e9))
	}
	if *rate > 0 {
		step := 1e9 / *rate
		d := make([]float64, len(a))
		for i, t := range a {
			d[i] = float64(t) - float64(i)*step
		}
		off := median(slices.Clone(d))
		for i := range d {
			d[i] = math.Abs(d[i] - off)
		}
		sort.Float64s(d)
		fmt.Printf("sched_p50_ns=%.0f\nsched_p99_ns=%.0f\nsched_max_ns=%.0f\n",
			quantile(d, 0.50), quantile(d, 0.99), d[len(d)-1])
	}
	return nil
}

func decompose(args []string) error {
	fs := flag.NewFlagSet("decompose", flag.ExitOnError)
	results := fs.String("results", "", "ratecheck results file (JSON Lines)")
	sinkStart := fs.String("sink-start", "", "sink start, RFC 3339 (GET /info .start)")
	_ = fs.Parse(args)
	ss, err := time.Parse(time.RFC3339Nano, *sinkStart)
	if err != nil {
		return fmt.Errorf("decompose: -sink-start: %w", err)
	}
	var arr []int64
	if err := json.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<20)).Decode(&arr); err != nil {
		return fmt.Errorf("decompose: arrivals: %w", err)
	}
	f, err := os.Open(*results)
	if err != nil {
		return err
	}
	defer f.Close()
	var rcStart time.Time
	type shot struct{ sched, sent float64 }
	var shots []shot
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Type      string  `json:"type"`
			Start     string  `json:"start"`
			Scheduled float64 `json:"scheduled_ns"`
			Sent      float64 `json:"sent_ns"`
			Error     string  `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("decompose: %s: %w", *results, err)
		}
		switch l.Type {
		case "header":
			if rcStart, err = time.Parse(time.RFC3339Nano, l.Start); err != nil {
				return fmt.Errorf("decompose: header start: %w", err)
			}
		case "result":
			if l.Error == "" {
				shots = append(shots, shot{l.Scheduled, l.Sent})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if rcStart.IsZero() || len(shots) == 0 || len(arr) == 0 {
		return fmt.Errorf("decompose: no header, results or arrivals")
	}
	// ratecheck's offsets -> sink offsets
	off := float64(rcStart.Sub(ss))
	slices.Sort(arr)
	sort.Slice(shots, func(i, j int) bool { return shots[i].sent < shots[j].sent })
	n := min(len(arr), len(shots))
	late := make([]float64, 0, n)
	transit := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		late = append(late, shots[i].sent-shots[i].sched)
		transit = append(transit, float64(arr[i])-(shots[i].sent+off))
	}
	sort.Float64s(late)
	sort.Float64s(transit)
	fmt.Printf("paired=%d\n", n)
	for _, q := range []struct {
		name string
		s    []float64
	}{{"late", late}, {"transit", transit}} {
		fmt.Printf("%s_p50_ns=%.0f\n%s_p99_ns=%.0f\n%s_max_ns=%.0f\n",
			q.name, quantile(q.s, 0.5), q.name, quantile(q.s, 0.99), q.name, q.s[len(q.s)-1])
	}
	return nil
}

// quantile of sorted s, nearest rank.
func quantile(s []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func median(s []float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func get(paths []string) error {
	var doc any
	if err := json.NewDecoder(os.Stdin).Decode(&doc); err != nil {
		return fmt.Errorf("get: %w", err)
	}
	for _, p := range paths {
		v := doc
		for _, k := range strings.Split(strings.TrimPrefix(p, "."), ".") {
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("get: %s: not an object at %q", p, k)
			}
			if v, ok = m[k]; !ok {
				return fmt.Errorf("get: %s: no %q", p, k)
			}
		}
		switch x := v.(type) {
		case float64:
			fmt.Println(strconv.FormatFloat(x, 'f', -1, 64))
		case string:
			fmt.Println(x)
		default:
			b, _ := json.Marshal(x)
			fmt.Println(string(b))
		}
	}
	return nil
}

func medianCmd() error {
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	var s []float64
	for _, f := range strings.Fields(string(b)) {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return fmt.Errorf("median: %w", err)
		}
		s = append(s, x)
	}
	if len(s) == 0 {
		return fmt.Errorf("median: no numbers")
	}
	fmt.Println(strconv.FormatFloat(median(s), 'f', -1, 64))
	return nil
}

type metric struct {
	key, label, unit, bar string
	vals                  map[string][]float64
}

func table(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var order []*metric
	byKey := map[string]*metric{}
	for ln, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		switch {
		case f[0] == "m" && len(f) == 5:
			m := &metric{key: f[1], label: f[2], unit: f[3], bar: f[4], vals: map[string][]float64{}}
			order = append(order, m)
			byKey[m.key] = m
		case f[0] == "v" && len(f) == 4:
			m := byKey[f[1]]
			if m == nil {
				return fmt.Errorf("%s:%d: undeclared metric %q", path, ln+1, f[1])
			}
			x, err := strconv.ParseFloat(f[3], 64)
			if err != nil {
				return fmt.Errorf("%s:%d: %w", path, ln+1, err)
			}
			m.vals[f[2]] = append(m.vals[f[2]], x)
		default:
			return fmt.Errorf("%s:%d: bad line %q", path, ln+1, line)
		}
	}

	// Reference tools: vegeta always, others when any metric has them.
	refs := []string{"vegeta"}
	for _, m := range order {
		for tool := range m.vals {
			if tool != "ratecheck" && !slices.Contains(refs, tool) {
				refs = append(refs, tool)
			}
		}
	}
	sort.Strings(refs[1:])
	header := []string{"metric", "ratecheck"}
	for i, ref := range refs {
		if i == 0 {
			header = append(header, ref, "ratio")
		} else {
			header = append(header, ref, "÷"+ref)
		}
	}
	header = append(header, "bar", "pass/fail")
	rows := [][]string{header}
	fails := 0
	for _, m := range order {
		rc, rcOK := med(m.vals["ratecheck"])
		row := []string{m.label + " (" + unitName(m.unit) + ")", "-"}
		if rcOK {
			row[1] = format(rc, m.unit) + nOf(m.vals["ratecheck"])
		}
		medians := map[string]float64{}
		for _, ref := range refs {
			v, ok := med(m.vals[ref])
			cell, ratio := "-", "-"
			if ok {
				medians[ref] = v
				cell = format(v, m.unit) + nOf(m.vals[ref])
				if rcOK && v != 0 {
					ratio = fmt.Sprintf("%.2fx", rc/v)
				}
			}
			row = append(row, cell, ratio)
		}
		row = append(row, "-", "-")
		barCol, verdictCol := len(row)-2, len(row)-1
		if m.bar != "-" {
			row[barCol] = m.bar
			if rcOK {
				ok, err := judgeAll(m.bar, rc, medians)
				if err != nil {
					return err
				}
				switch ok {
				case passed:
					row[verdictCol] = "PASS"
				case failed:
					row[verdictCol] = "FAIL"
					fails++
				default:
					row[verdictCol] = "n/a" // a reference tool's figure is missing
				}
			}
		}
		rows = append(rows, row)
	}
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for ri, r := range rows {
		var sb strings.Builder
		for i, c := range r {
			if i > 0 {
				sb.WriteString(" | ")
			}
			sb.WriteString(c)
			sb.WriteString(strings.Repeat(" ", width[i]-len([]rune(c))))
		}
		fmt.Println(strings.TrimRight(sb.String(), " "))
		if ri == 0 {
			var sep []string
			for _, w := range width {
				sep = append(sep, strings.Repeat("-", w))
			}
			fmt.Println(strings.Join(sep, "-|-"))
		}
	}
	fmt.Println()
	fmt.Println("figures are medians over repetitions ([n] = number of repetitions when > 1); ratio = ratecheck / vegeta, ÷TOOL = ratecheck / TOOL")
	if fails > 0 {
		fmt.Printf("%d bar(s) failed\n", fails)
	}
	return nil
}

func med(s []float64) (float64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	return median(slices.Clone(s)), true
}

func nOf(s []float64) string {
	if len(s) > 1 {
		return fmt.Sprintf(" [%d]", len(s))
	}
	return ""
}

func unitName(u string) string {
	switch u {
	case "rps":
		return "req/s"
	case "us":
		return "µs"
	case "n":
		return "count"
	case "Bpr":
		return "bytes/request"
	case "resps":
		return "results/s"
	}
	return u
}

func format(x float64, unit string) string {
	switch unit {
	case "rps", "n", "resps":
		return strconv.FormatFloat(x, 'f', 0, 64)
	case "Bpr":
		return strconv.FormatFloat(x, 'f', 1, 64)
	case "us":
		return strconv.FormatFloat(x, 'f', 2, 64)
	case "ms":
		return strconv.FormatFloat(x, 'f', 3, 64)
	case "MB":
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

type verdict int

const (
	passed verdict = iota
	failed
	missing
)

// judgeAll applies every comma-separated bar to x; "KxTOOL" bars compare x
// with K times ref[TOOL]. A bar on a tool without a figure is missing.
func judgeAll(bars string, x float64, ref map[string]float64) (verdict, error) {
	out := passed
	for _, bar := range strings.Split(bars, ",") {
		bar = strings.TrimSpace(bar)
		if op, k, tool, ok := ratioBar(bar); ok {
			v, have := ref[tool]
			if !have {
				if out == passed {
					out = missing
				}
				continue
			}
			ok, err := judge(op+strconv.FormatFloat(k*v, 'g', -1, 64), x)
			if err != nil {
				return failed, err
			}
			if !ok {
				out = failed
			}
			continue
		}
		ok, err := judge(bar, x)
		if err != nil {
			return failed, err
		}
		if !ok {
			out = failed
		}
	}
	return out, nil
}

// ratioBar parses "<=2xvegeta" into its operator, factor and tool.
func ratioBar(bar string) (op string, k float64, tool string, ok bool) {
	for _, o := range []string{"<=", ">=", "<"} {
		if rest, found := strings.CutPrefix(bar, o); found {
			num, t, found := strings.Cut(rest, "x")
			if !found || t == "" {
				return "", 0, "", false
			}
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return "", 0, "", false
			}
			return o, v, t, true
		}
	}
	return "", 0, "", false
}

// judge applies bar ("<=X", "<X", ">=X", "~T±P%") to x.
func judge(bar string, x float64) (bool, error) {
	num := func(s string) (float64, error) { return strconv.ParseFloat(strings.TrimSpace(s), 64) }
	switch {
	case strings.HasPrefix(bar, "<="):
		v, err := num(bar[2:])
		return x <= v, err
	case strings.HasPrefix(bar, ">="):
		v, err := num(bar[2:])
		return x >= v, err
	case strings.HasPrefix(bar, "<"):
		v, err := num(bar[1:])
		return x < v, err
	case strings.HasPrefix(bar, "~") && strings.HasSuffix(bar, "%"):
		t, p, ok := strings.Cut(strings.TrimSuffix(bar[1:], "%"), "±")
		if !ok {
			break
		}
		tv, err := num(t)
		if err != nil {
			return false, err
		}
		pv, err := num(p)
		if err != nil {
			return false, err
		}
		return math.Abs(x-tv) <= tv*pv/100, nil
	}
	return false, fmt.Errorf("bad bar %q", bar)
}
