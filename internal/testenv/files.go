package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// IsolateTemp points os.MkdirTemp at a fresh directory for the rest of the
// test, so that AssertEmptyDir can check that a server left nothing behind.
func IsolateTemp(t testing.TB) string {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

// AssertEmptyDir fails the test for everything left in dir and every
// process still naming it.
func AssertEmptyDir(t testing.TB, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind in %s: %s", dir, e.Name())
	}
	if ps := ProcsMentioning(dir); len(ps) > 0 {
		t.Errorf("processes mentioning %s still running: %v", dir, ps)
	}
}

// WriteConf writes a configuration file named name for the test, in a
// directory removed at its end, and returns its path.
func WriteConf(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
