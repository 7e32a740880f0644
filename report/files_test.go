package report

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Every file asked for is written; one that cannot be is the error, after
// the others, named by its format and path.
func TestFilesWrite(t *testing.T) {
	dir := t.TempDir()
	d := NewDocument("test", "probe", "probe", Run{Target: "x", Kind: "probe", ResultsFile: "x.jsonl"})
	f := Files{HTML: filepath.Join(dir, "missing", "r.html"), JSON: filepath.Join(dir, "r.json"), JUnit: filepath.Join(dir, "r.xml")}
	var wrote []string
	err := f.Write(d, func(p string) { wrote = append(wrote, p) })
	var fe *FileError
	if !errors.As(err, &fe) || fe.Format != "html" || fe.Path != f.HTML || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %#v, want the HTML file's, without its path", err)
	}
	if len(wrote) != 2 || wrote[0] != f.JSON || wrote[1] != f.JUnit {
		t.Errorf("wrote %v", wrote)
	}
	if got := d.ResultsFiles(); len(got) != 1 || got[0] != "x.jsonl" {
		t.Errorf("results files %v", got)
	}
	if (Files{}).Any() || !f.Any() {
		t.Error("Any")
	}
}
