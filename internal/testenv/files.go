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

// KeepDir is where a developer asked tests to keep the results streams of
// their probes ($RATECHECK_KEEP), to re-infer a failed run with `ratecheck
// report`; empty when not asked.
func KeepDir() string { return os.Getenv("RATECHECK_KEEP") }

// KeepOnFailure copies the file at path into KeepDir when the test fails,
// named after the test.
func KeepOnFailure(t testing.TB, path string) {
	dir := KeepDir()
	if dir == "" {
		return
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		b, err := os.ReadFile(path)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, KeepName(t.Name())+"-"+filepath.Base(path)), b, 0o644)
		}
		if err != nil {
			t.Logf("keeping %s: %v", path, err)
		}
	})
}

// KeepName is s made a file name: every character but letters, digits,
// '.', '=' and '-' becomes '_'.
func KeepName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '=' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}
