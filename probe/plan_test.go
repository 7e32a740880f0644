package probe

import (
	"context"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/refserver"
)

// A burst holds one connection per request, so the plan never releases a
// burst larger than the engine's connection limit, and says so.
func TestBurstsRespectTheConnectionLimit(t *testing.T) {
	srv, err := refserver.StartBuiltin("builtin:none")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	req, _ := attack.NewRequest("GET", srv.URL, nil, "")
	res, err := Run(context.Background(), req, Options{MaxTime: MinTime * 2, Engine: attack.Options{MaxConns: 150}})
	if err != nil {
		t.Fatal(err)
	}
	largest := 0
	for _, b := range res.Observation.burstPhases() {
		largest = max(largest, len(res.Observation.phase(b)))
	}
	if largest != 150 {
		t.Errorf("largest burst %d, want the connection limit 150", largest)
	}
	capped := false
	for _, n := range res.Notes {
		capped = capped || strings.Contains(n, "capped at the connection limit of 150")
	}
	if !capped {
		t.Errorf("no note says the burst was capped: %q", res.Notes)
	}
}
