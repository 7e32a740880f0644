package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/sim"
)

// Shots every 10ms, cold connections answered 40ms after their instant:
// at 50ms, the shots of 10ms … 40ms are in flight.
func TestInterruptCancelsAtItsInstant(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	canceledAt := time.Duration(-1)
	cfg := spec(t, bucket)
	var r *rig
	cfg.Interrupt = &sim.Interrupt{At: 50 * ms, Cancel: func() { canceledAt = r.n.Now(); cancel() }}
	r = begin(t, ctx, cfg, attack.Options{})
	r.n.Schedule(r.ctx, 20, every(0, 10*ms))
	r.n.Wait()
	if canceledAt != 50*ms || ctx.Err() == nil || r.ctx.Err() == nil {
		t.Fatalf("Cancel called at %v (want 50ms); ctx %v, run %v", canceledAt, ctx.Err(), r.ctx.Err())
	}
	if r.n.Sent() != 5 || len(r.got) != 5 {
		t.Fatalf("sent %d, %d results; want 5 (0ms … 40ms)", r.n.Sent(), len(r.got))
	}
	canceled := 0
	for _, res := range r.got {
		switch {
		case res.Sent > 50*ms:
			t.Errorf("seq %d sent at %v, after the interrupt", res.Seq, res.Sent)
		case res.Error == "canceled":
			canceled++
			if res.Done != 50*ms || res.Status != 0 {
				t.Errorf("seq %d canceled at %v with status %d, want at 50ms with none", res.Seq, res.Done, res.Status)
			}
		case res.Done > 50*ms || res.Status != 200:
			t.Errorf("seq %d: status %d error %q done %v", res.Seq, res.Status, res.Error, res.Done)
		}
	}
	if canceled != 4 {
		t.Errorf("%d canceled, want 4 (the shots of 10ms … 40ms)", canceled)
	}
	if _, ok := r.n.Do(ctx, attack.Shot{}); ok {
		t.Error("Do sent after the interrupt")
	}
}
