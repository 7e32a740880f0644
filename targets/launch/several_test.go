package launch

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// Every target is started before the first request; the one at fault is
// named by its index, and closeAll stops those started before it.
func TestOpenAll(t *testing.T) {
	tgts, closeAll, failed, err := OpenAll(context.Background(), []string{"builtin:none", "nonsense"}, Options{})
	defer closeAll()
	var ue *UsageError
	if !errors.As(err, &ue) || failed != 1 || tgts[0] == nil || tgts[1] != nil {
		t.Errorf("%v, failed %d, %v", err, failed, tgts)
	}
	tgts, closeAll, failed, err = OpenAll(context.Background(), []string{"builtin:none", "http://127.0.0.1:1/"}, Options{})
	defer closeAll()
	if err != nil || failed != -1 || len(tgts) != 2 {
		t.Errorf("%v, failed %d", err, failed)
	}
}

// HTTP/2 is spoken only over TLS: a plain http target is refused, saying
// how it is served.
func TestHTTP2NeedsAnHTTPSTarget(t *testing.T) {
	_, err := OpenWith(context.Background(), "builtin:none", Options{HTTP2: true})
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--http2 needs an https target (HTTP/2 here is spoken over TLS): builtin:none is served over plain http (http://127.0.0.1:") {
		t.Errorf("%v", err)
	}
	if _, err := OpenWith(context.Background(), "https://127.0.0.1:1/", Options{HTTP2: true}); err != nil {
		t.Errorf("https: %v", err)
	}
}

func TestNotesAndSimulatedTargets(t *testing.T) {
	var b bytes.Buffer
	(&Target{Kind: KindNginx, Spec: "nginx:a.conf", Dir: "/tmp/x", Notes: []string{"a.conf:3: rewrote listen"}}).writeNotes(&b, true)
	if want := "nginx: a.conf:3: rewrote listen\nnginx: nginx:a.conf runs from /tmp/x (generated nginx.conf, error.log); kept after the run (--keep)\n"; b.String() != want {
		t.Errorf("notes %q", b.String())
	}
	var ue *UsageError
	if err := RefuseSimulated("builtin:none", "sim:token_bucket?rate=1/s"); !errors.As(err, &ue) || !strings.HasSuffix(err.Error(), "(or the same limiter as builtin:token_bucket?rate=1/s)") {
		t.Errorf("%v", err)
	}
	if err := RefuseSimulated("builtin:none"); err != nil {
		t.Errorf("%v", err)
	}
}
