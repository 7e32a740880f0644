package sim_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
)

// rounds sends k bursts of two, 100ms apart, each on the two connections
// the first opened.
func rounds(r *rig, k int) {
	for i := range k {
		r.n.Burst(r.ctx, 100*ms*time.Duration(i), shots(2))
		r.n.Wait()
	}
}

func TestConnectionScopeGivesEachConnectionAFullBurst(t *testing.T) {
	r := run(t, "sim:token_bucket?rate=1/s&burst=3&scope=connection&rtt=20ms&seed=1", attack.Options{})
	rounds(r, 4)
	perConn := map[int64]int{}
	for _, res := range r.got {
		if res.Admitted() {
			perConn[res.Conn]++
		}
	}
	if len(perConn) != 2 || admitted(r.got) != 6 {
		t.Errorf("admitted per connection %v, want 3 on each of 2", perConn)
	}
	for c, k := range perConn {
		if k != 3 {
			t.Errorf("connection %d: %d admitted, want the burst of 3", c, k)
		}
	}

	global := run(t, "sim:token_bucket?rate=1/s&burst=3&rtt=20ms&seed=1", attack.Options{})
	rounds(global, 4)
	if k := admitted(global.got); k != 3 {
		t.Errorf("the same rounds against a global limit: %d admitted, want 3", k)
	}
}

func TestFreshShotOpensAConnectionOfItsOwn(t *testing.T) {
	r := run(t, bucket, attack.Options{})
	pooled := r.do(attack.Shot{})
	for range 2 {
		fresh := r.do(attack.Shot{Fresh: true})
		if fresh.Conn == pooled.Conn || fresh.Sent-fresh.Scheduled != 20*ms {
			t.Errorf("fresh shot on conn %d (pooled %d), sent %v after its instant, want a new connection and a 20ms handshake",
				fresh.Conn, pooled.Conn, fresh.Sent-fresh.Scheduled)
		}
	}
	again := r.do(attack.Shot{})
	if again.Conn != pooled.Conn || again.Sent != again.Scheduled {
		t.Errorf("after fresh shots a pooled one went on conn %d, %v late; want conn %d at once (fresh connections are closed)",
			again.Conn, again.Sent-again.Scheduled, pooled.Conn)
	}
	conns := map[int64]bool{}
	for _, res := range r.got {
		conns[res.Conn] = true
	}
	if len(conns) != 3 {
		t.Errorf("%d connections, want 3 (one pooled, two fresh)", len(conns))
	}
}

func TestShotSourceIsRecordedAndCountedByScopeIP(t *testing.T) {
	r := run(t, "sim:token_bucket?rate=1/s&burst=2&scope=ip&rtt=20ms&seed=1", attack.Options{})
	for i, want := range []int{200, 200, 429} {
		if res := r.do(attack.Shot{}); res.Status != want || res.Source != "" {
			t.Errorf("default source, request %d: status %d source %q, want %d and none", i, res.Status, res.Source, want)
		}
	}
	other := netip.MustParseAddr("127.0.0.2")
	for i := range 2 {
		res := r.do(attack.Shot{Source: other})
		if res.Status != 200 || res.Source != "127.0.0.2" {
			t.Errorf("127.0.0.2, request %d: status %d source %q, want 200 from its own quota", i, res.Status, res.Source)
		}
		if res.Conn == r.got[0].Conn {
			t.Errorf("127.0.0.2 reused the default source's connection %d", res.Conn)
		}
	}
	if res := r.do(attack.Shot{Source: other}); res.Status != 429 {
		t.Errorf("127.0.0.2's third request: status %d, want 429", res.Status)
	}
}

func TestReplicasAdmitTwiceTheLimitInABurst(t *testing.T) {
	for _, c := range []struct {
		spec string
		want int
	}{
		{"sim:token_bucket?rate=1/s&burst=5&rtt=20ms&seed=1", 5},
		{"sim:token_bucket?rate=1/s&burst=5&rtt=20ms&replicas=2&seed=1", 10},
	} {
		r := run(t, c.spec, attack.Options{})
		r.n.Burst(r.ctx, 0, shots(12))
		r.n.Wait()
		if k := admitted(r.got); k != c.want {
			t.Errorf("%s: a burst of 12 had %d admitted, want %d", c.spec, k, c.want)
		}
		if c.want == 10 && (r.got[10].Admitted() || r.got[11].Admitted()) {
			t.Errorf("%s: the last two of the burst (one per replica) were admitted", c.spec)
		}
	}
}
