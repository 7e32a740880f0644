package outfiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file written over an input or another output is refused, naming both
// flags; the same file by another spelling or a link is the same file.
func TestClash(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("a.jsonl", []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.jsonl", "link.jsonl"); err != nil {
		t.Fatal(err)
	}
	in := File{Flag: "the RESULTS argument", What: "the results stream", Path: "a.jsonl"}
	html := func(p string) File { return File{Flag: "--html", What: "the HTML report", Path: p, Out: true} }
	for _, p := range []string{"a.jsonl", "./a.jsonl", filepath.Join(dir, "a.jsonl"), "link.jsonl"} {
		err := Clash([]File{in, html(p)})
		want := "--html " + p + " is the same file as the RESULTS argument a.jsonl: the HTML report would overwrite the results stream; give --html another path"
		if err == nil || err.Error() != want {
			t.Errorf("--html %s: %v; want %q", p, err, want)
		}
	}
	if err := Clash([]File{in, html("b.html")}); err != nil {
		t.Errorf("another file: %v", err)
	}
	// Only a file written is refused: two inputs may be one file.
	if err := Clash([]File{in, in}); err != nil {
		t.Errorf("two inputs: %v", err)
	}
}

func TestCanCreate(t *testing.T) {
	dir := t.TempDir()
	if err := CanCreate(filepath.Join(dir, "r.html")); err != nil {
		t.Errorf("a new file: %v", err)
	}
	if err := CanCreate(dir); !errors.Is(err, ErrIsDir) {
		t.Errorf("a directory: %v", err)
	}
	if err := CanCreate(filepath.Join(dir, "missing", "r.html")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing directory: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestWriteAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := WriteAtomic(path, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(path, []byte("[]")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if err != nil || string(b) != "[]" || fi.Mode().Perm() != 0o644 {
		t.Errorf("%q %v %v", b, err, fi.Mode())
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// A report file over an input, in a directory that is not there, or naming
// a directory, is refused naming its flag.
func TestCheckReports(t *testing.T) {
	dir := t.TempDir()
	in := []File{{Flag: "--config", What: "the config", Path: filepath.Join(dir, "c.yaml")}}
	report := func(flag, p string) []File { return []File{{Flag: flag, What: "the report", Path: p, Out: true}} }
	for _, c := range []struct {
		reports []File
		want    string
	}{
		{report("--html", filepath.Join(dir, "c.yaml")), "--html " + filepath.Join(dir, "c.yaml") + " is the same file as --config"},
		{report("--junit", dir), "--junit " + dir + " is a directory: name a file, e.g. " + filepath.Join(dir, "report.junit")},
		{report("--json", filepath.Join(dir, "none", "r.json")), "--json " + filepath.Join(dir, "none", "r.json") + " cannot be written: no such file or directory (choose another place)"},
	} {
		if err := CheckReports(in, c.reports); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v; want %q", err, c.want)
		}
	}
	if err := CheckReports(in, report("--html", filepath.Join(dir, "r.html"))); err != nil {
		t.Error(err)
	}
}

// A report file that could not be written names the streams to render it
// again from, when there are any.
func TestWriteError(t *testing.T) {
	err := &os.PathError{Op: "open", Path: "r.html", Err: os.ErrPermission}
	if got := WriteError("--html", "r.html", err, nil).Error(); got != "--html r.html could not be written: permission denied" {
		t.Errorf("no streams: %s", got)
	}
	want := "--html r.html could not be written: permission denied; the run is recorded in a.jsonl, b.jsonl: render the file again with 'ratecheck report a.jsonl b.jsonl --html r.html'"
	if got := WriteError("--html", "r.html", err, []string{"a.jsonl", "b.jsonl"}).Error(); got != want {
		t.Errorf("streams: %s", got)
	}
}
