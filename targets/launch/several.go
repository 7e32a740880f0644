package launch

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ratecheck/ratecheck/targets/sim"
)

// What a command does with its targets beyond opening one: check them
// against the run, start several before the first request, say what was
// rewritten.

// checkHTTP2 is a *UsageError when the run speaks HTTP/2 (http2) to a
// target served over plain http (builtin:, nginx: and haproxy: targets
// always are): ratecheck speaks HTTP/2 only over TLS.
func (t *Target) checkHTTP2(http2 bool) error {
	if !http2 || strings.HasPrefix(t.URL, "https://") {
		return nil
	}
	served := t.URL + " is plain http"
	if t.Spec != t.URL {
		served = t.Spec + " is served over plain http (" + t.URL + ")"
	}
	return &UsageError{fmt.Errorf("--http2 needs an https target (HTTP/2 here is spoken over TLS): %s; drop --http2 or name an https:// URL", served)}
}

// writeNotes tells the user what ratecheck rewrote in an nginx or HAProxy
// config and, when kept, where its directory is.
func (t *Target) writeNotes(w io.Writer, keep bool) {
	for _, n := range t.Notes {
		fmt.Fprintf(w, "%s: %s\n", t.Kind, n)
	}
	if keep && t.Dir != "" {
		files := "generated nginx.conf, error.log"
		if t.Kind == KindHAProxy {
			files = "generated haproxy.cfg, stderr.log"
		}
		fmt.Fprintf(w, "%s: %s runs from %s (%s); kept after the run (--keep)\n", t.Kind, t.Spec, t.Dir, files)
	}
}

// OpenAll starts every target before any request is sent, so that a bad
// spec or config stops a command before it spends time on the others; idle
// targets cost nothing, and none sees traffic before its turn. On an error,
// failed is the index of the spec at fault. closeAll closes whatever was
// started: call it even on error.
func OpenAll(ctx context.Context, specs []string, opt Options) (tgts []*Target, closeAll func(), failed int, err error) {
	tgts = make([]*Target, len(specs))
	closeAll = func() {
		for _, t := range tgts {
			if t != nil {
				_ = t.Close()
			}
		}
	}
	for i, spec := range specs {
		if tgts[i], err = OpenWith(ctx, spec, opt); err != nil {
			return tgts, closeAll, i, err
		}
	}
	return tgts, closeAll, -1, nil
}

// RefuseSimulated is a *UsageError for a sim: target among specs given to
// a command that runs an attack profile: the simulator runs the probe's
// plan (probe, check, compare --probe), not the engine's profiles.
func RefuseSimulated(specs ...string) error {
	for _, spec := range specs {
		if strings.HasPrefix(spec, sim.Prefix) {
			return &UsageError{fmt.Errorf("%s: a sim: target runs the probe's experiment only: use 'ratecheck probe', 'check' or 'compare --probe' (or the same limiter as builtin:%s)",
				spec, strings.TrimPrefix(spec, sim.Prefix))}
		}
	}
	return nil
}
