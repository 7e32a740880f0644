package sim_test

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
)

const bucket = "sim:token_bucket?rate=10/s&burst=20&rtt=20ms&seed=1"

func TestDoTakesOneRoundTripAfterTheHandshake(t *testing.T) {
	r := run(t, bucket, attack.Options{})
	first := r.do(attack.Shot{})
	if first.Scheduled != 0 || first.Sent != 20*ms || first.Done != 40*ms || first.FirstByte != 40*ms {
		t.Errorf("first request: scheduled %v sent %v first byte %v done %v, want 0, 20ms (a handshake), 40ms, 40ms",
			first.Scheduled, first.Sent, first.FirstByte, first.Done)
	}
	if now := r.n.Now(); now != 40*ms {
		t.Errorf("Now after the first Do = %v, want 40ms", now)
	}
	second := r.do(attack.Shot{})
	if second.Scheduled != 40*ms || second.Sent != 40*ms || second.Done != 60*ms || second.Conn != first.Conn {
		t.Errorf("second request: scheduled %v sent %v done %v on conn %d, want 40ms, 40ms, 60ms on the first's conn %d",
			second.Scheduled, second.Sent, second.Done, second.Conn, first.Conn)
	}
	if now := r.n.Now(); now != 60*ms {
		t.Errorf("Now after the second Do = %v, want 60ms", now)
	}
}

func TestSleepAdvancesTheClockExactly(t *testing.T) {
	r := run(t, bucket, attack.Options{})
	if !r.n.Sleep(r.ctx, 7*ms) || r.n.Now() != 7*ms {
		t.Fatalf("Sleep(7ms) from 0: now %v", r.n.Now())
	}
	if !r.n.Sleep(r.ctx, 1234*ms+5) || r.n.Now() != 1241*ms+5 {
		t.Fatalf("Sleep(1.234000005s) from 7ms: now %v, want 1.241000005s", r.n.Now())
	}
	if !r.n.Sleep(r.ctx, -ms) || r.n.Now() != 1241*ms+5 {
		t.Fatalf("a negative Sleep moved the clock to %v", r.n.Now())
	}
	if len(r.got) != 0 || r.n.Sent() != 0 {
		t.Fatalf("sleeping sent %d request(s)", r.n.Sent())
	}
}

func TestScheduleSendsEachShotAtItsAt(t *testing.T) {
	r := run(t, bucket, attack.Options{})
	warm := r.do(attack.Shot{}) // the connection the schedule reuses
	r.n.Schedule(r.ctx, 5, every(100*ms, 50*ms))
	if r.n.Sent() != 6 {
		t.Fatalf("Schedule of 5 sent %d, want 5", r.n.Sent()-1)
	}
	r.n.Wait()
	if len(r.got) != 6 {
		t.Fatalf("%d results after Wait, want 6", len(r.got))
	}
	for i, res := range r.got[1:] {
		at := 100*ms + 50*ms*time.Duration(i)
		if res.Scheduled != at || res.Sent != at || res.Done != at+20*ms || res.Conn != warm.Conn {
			t.Errorf("shot %d: scheduled %v sent %v done %v conn %d, want %v, %v, %v on conn %d",
				i, res.Scheduled, res.Sent, res.Done, res.Conn, at, at, at+20*ms, warm.Conn)
		}
	}
	if r.n.Now() != 320*ms {
		t.Errorf("Now after Wait = %v, want 320ms (the last answer)", r.n.Now())
	}
}

func TestBurstSendsAtOneInstantOnDistinctConnections(t *testing.T) {
	r := run(t, bucket, attack.Options{})
	r.do(attack.Shot{}) // one idle connection the burst takes first
	r.n.Burst(r.ctx, 100*ms, shots(10))
	r.n.Wait()
	burst := r.got[1:]
	if len(burst) != 10 {
		t.Fatalf("%d burst results, want 10", len(burst))
	}
	conns := map[int64]bool{}
	for _, res := range burst {
		if res.Scheduled != 100*ms || res.Sent != 100*ms || res.Done != 120*ms {
			t.Errorf("seq %d: scheduled %v sent %v done %v, want 100ms, 100ms (armed: no handshake), 120ms",
				res.Seq, res.Scheduled, res.Sent, res.Done)
		}
		conns[res.Conn] = true
	}
	if len(conns) != 10 {
		t.Errorf("the burst of 10 went out on %d distinct connections", len(conns))
	}
	if !conns[r.got[0].Conn] {
		t.Errorf("the burst did not reuse the idle connection %d", r.got[0].Conn)
	}
}
