package outfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// attack's default stream is compact, probe's JSON Lines; --out is as
// given, its name picking the format.
func TestStreamPath(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct{ command, out, want string }{
		{"attack", "", "ratecheck-attack-20260102-030405.rcs"},
		{"probe", "", "ratecheck-probe-20260102-030405.jsonl"},
		{"attack", "x.jsonl", "x.jsonl"},
		{"probe", "p.rcs", "p.rcs"},
	} {
		if got := StreamPath(c.command, c.out, now); got != c.want {
			t.Errorf("StreamPath(%q, %q) = %q; want %q", c.command, c.out, got, c.want)
		}
	}
}

// check's streams: one endpoint writes --out as given; several are
// numbered.
func TestStreamPathsOfCheck(t *testing.T) {
	base := Base("check", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	dir := t.TempDir()
	cases := []struct {
		out  string
		n    int
		want []string
	}{
		{"", 1, []string{"ratecheck-check-20260102-030405.jsonl"}},
		{"x.jsonl", 1, []string{"x.jsonl"}},
		{dir, 1, []string{filepath.Join(dir, "ratecheck-check-20260102-030405.jsonl")}},
		{"", 2, []string{"ratecheck-check-20260102-030405-1.jsonl", "ratecheck-check-20260102-030405-2.jsonl"}},
		{"run.jsonl", 2, []string{"run-1.jsonl", "run-2.jsonl"}},
		{dir + "/sub/", 2, []string{filepath.Join(dir, "sub", "ratecheck-check-20260102-030405-1.jsonl"), filepath.Join(dir, "sub", "ratecheck-check-20260102-030405-2.jsonl")}},
	}
	for _, c := range cases {
		got, err := StreamPaths(base, c.out, c.n)
		if err != nil || strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("StreamPaths(%q, %d) = %v, %v; want %v", c.out, c.n, got, err, c.want)
		}
	}
}

// compare's streams: a prefix, a directory (existing or to create).
func TestStreamPathsOfCompare(t *testing.T) {
	base := Base("compare", time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	for _, c := range []struct {
		out  string
		want string // for target 2
	}{
		{"", "ratecheck-compare-20261129-190000-2.jsonl"},
		{filepath.Join(dir, "run"), filepath.Join(dir, "run-2.jsonl")},
		{filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run-2.jsonl")},
		{dir, filepath.Join(dir, "ratecheck-compare-20261129-190000-2.jsonl")},
		{filepath.Join(dir, "new") + "/", filepath.Join(dir, "new", "ratecheck-compare-20261129-190000-2.jsonl")},
	} {
		ps, err := StreamPaths(base, c.out, 3)
		if err != nil || len(ps) != 3 || ps[1] != c.want {
			t.Errorf("--out %q: %v, %v; want [1] = %q", c.out, ps, err, c.want)
		}
	}
}

// An earlier run's results hold data; an empty file or a device does not.
func TestHoldsData(t *testing.T) {
	dir := t.TempDir()
	full, empty := filepath.Join(dir, "full.jsonl"), filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(full, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{full: true, empty: false, os.DevNull: false, filepath.Join(dir, "none"): false} {
		if got := HoldsData(path); got != want {
			t.Errorf("HoldsData(%s) = %v, want %v", path, got, want)
		}
	}
}

// A stream is refused over an input or a report of the same run, and, its
// --out given, over a file with data in it; the default names are never
// an earlier run's.
func TestGuardStreams(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(old, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func(p string) File { return File{Flag: "--out", What: "the results stream", Path: p} }
	html := []File{{Flag: "--html", What: "the HTML report", Path: filepath.Join(dir, "new.jsonl"), Out: true}}
	for _, c := range []struct {
		out   File
		paths []string
		want  string
	}{
		{out(old), []string{old}, "--out " + old + " exists: it may be an earlier run's results; remove it or choose another path"},
		{out(filepath.Join(dir, "old")), []string{filepath.Join(dir, "new-1.jsonl"), old},
			"--out " + filepath.Join(dir, "old") + " names " + old + ", which exists: it may be an earlier run's results; remove it or choose another --out"},
		{out(""), []string{old}, ""},
		{out(""), []string{filepath.Join(dir, "new.jsonl")}, "--html " + filepath.Join(dir, "new.jsonl") + " is the same file as --out"},
	} {
		err := GuardStreams(nil, c.out, c.paths, html)
		if (err == nil) != (c.want == "") || err != nil && !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("--out %q %v: %v; want %q", c.out.Path, c.paths, err, c.want)
		}
	}
}
