package attack

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// A burst's answers are due --timeout after the release, however long the
// idle before it: a server that never answers costs Timeout, not Timeout +
// 10 s, and an idle longer than Timeout is no failure.
func TestBurstAnswerDueTimeoutAfterRelease(t *testing.T) {
	silent := rawServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }) // reads, never answers, until the client hangs up
	res, err := Run(context.Background(), Burst{K: 3, Idle: 100 * time.Millisecond}, RunOptions{Request: mustRequest(t, "http://"+silent+"/"), Options: Options{Timeout: 200 * time.Millisecond}})
	if err == nil || res.Elapsed > 2*time.Second || !strings.Contains(res.Untested, "timeout") {
		t.Fatalf("err %v, elapsed %v, untested %q", err, res.Elapsed, res.Untested)
	}
	srv := startBuiltin(t, "builtin:none")
	res, err = Run(context.Background(), Burst{K: 3, Idle: 500 * time.Millisecond}, RunOptions{Request: mustRequest(t, srv.URL), Options: Options{Timeout: 200 * time.Millisecond}})
	if err != nil || res.Report.Metrics.Burst.Admitted != 3 {
		t.Fatalf("idle longer than the timeout: %v %+v", err, res.Report.Metrics.Burst)
	}
}
