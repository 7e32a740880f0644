//go:build unix

package nginx

import (
	"net/http"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ratecheck/ratecheck/internal/testenv"
)

// Goroutines that exit with their thread locked end that thread (ratecheck's
// pacing and burst threads do, on purpose). If one of them was the thread
// that forked nginx, the death signal would stop nginx mid-run: nginx must
// survive any number of them.
func TestNginxSurvivesRetiredThreads(t *testing.T) {
	inst := startNginx(t, filepath.Join("..", "..", "testdata", "nginx", "burst.conf"), Options{})
	testenv.RetireLockedThreads(50)
	if err := syscall.Kill(inst.Pid, 0); err != nil {
		t.Fatalf("nginx master %d is gone: %v", inst.Pid, err)
	}
	resp, err := http.Get(readyURL(inst))
	if err != nil {
		t.Fatalf("nginx stopped answering: %v", err)
	}
	resp.Body.Close()
}
