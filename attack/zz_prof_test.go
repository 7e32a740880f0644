package attack

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestZZProf(t *testing.T) {
	url := os.Getenv("PROF_URL")
	if url == "" {
		t.Skip()
	}
	req, _ := NewRequest("GET", url, nil, "")
	col := NewCollector(false)
	e := New(req, Options{MaxRequests: 100000, TLS: TLSOptions{Insecure: true}}, col.Add)
	ctx := e.Begin(context.Background())
	rep, err := Steady{Rate: 5000, Duration: 4 * time.Second}.Run(ctx, e, col)
	e.Finish()
	t.Log(rep.Verdict, err)
}
