package selftest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"strconv"
	"time"

	"github.com/ratecheck/ratecheck/targets/refserver"
	"github.com/ratecheck/ratecheck/targets/sim"
)

// The model space the simulation sweep draws its truths from: every
// family and variant the reference models have, with parameters in the
// ranges real limits are set to, behind networks from loopback to a
// long-haul link. The draw is a pure function of the seed.
const (
	minRate, maxRate     = 0.5, 500.0 // per second
	minBurst, maxBurst   = 1, 500
	minWindow, maxWindow = time.Second, 5 * time.Minute
	minRTT, maxRTT       = 100 * time.Microsecond, 80 * time.Millisecond
	// The shares of runs with a variant or a condition.
	shareCountRejected = 0.25
	sharePenalty       = 0.1
	shareRefill        = 0.15
	shareScopeIP       = 0.15
	shareScopeConn     = 0.08
	shareReplicas      = 0.04
	shareJitter        = 0.5
	shareStall         = 0.25
	shareFault         = 0.05
	shareInterrupt     = 0.05
	// shareWindowPool: of the two-tier draws, a window primary beside a
	// burst pool (the rest a bucket behind or beside a window).
	shareWindowPool = 0.4
	// maxSlack: the most requests a pacer with slack serves at once.
	maxSlack = 20
)

// familyWeights: how often each family is drawn, the commonest real ones
// most.
var familyWeights = []struct {
	algo   string
	weight float64
}{
	{"token_bucket", 3}, {"fixed_window", 3}, {"sliding_log", 2}, {"sliding_counter", 2},
	{"leaky_shaping", 1.5}, {"concurrency", 1}, {"tiers", 1}, {"none", 0.5},
}

// Draw is one simulated target: a sim: spec (its seed included, so the
// spec alone replays it) and whether the run is to be interrupted, and
// when.
type Draw struct {
	Spec        string
	InterruptAt time.Duration // 0: not interrupted
}

// drawTarget draws one target from the model space. Draws the reference
// models refuse (a delay over the queue, say) are drawn again.
func drawTarget(rng *rand.Rand, seed uint64) Draw {
	for {
		q := url.Values{}
		algo := pickFamily(rng)
		drawParams(rng, algo, q)
		drawNetwork(rng, q)
		q.Set("seed", strconv.FormatUint(seed, 10))
		spec := sim.Prefix + algo + "?" + q.Encode()
		if _, err := sim.ParseSpec(spec); err != nil {
			continue
		}
		d := Draw{Spec: spec}
		if rng.Float64() < shareInterrupt {
			d.InterruptAt = time.Duration(500+rng.IntN(30000)) * time.Millisecond
		}
		return d
	}
}

func pickFamily(rng *rand.Rand) string {
	total := 0.0
	for _, f := range familyWeights {
		total += f.weight
	}
	x := rng.Float64() * total
	for _, f := range familyWeights {
		if x -= f.weight; x < 0 {
			return f.algo
		}
	}
	return familyWeights[0].algo
}

// logUniform draws from [lo, hi] evenly on a log scale: a limit of 5 is
// as likely as one of 500 per hundred.
func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
}

func drawRate(rng *rand.Rand) string {
	return strconv.FormatFloat(round(logUniform(rng, minRate, maxRate), 2), 'f', -1, 64) + "/s"
}

func drawCount(rng *rand.Rand) int {
	return int(math.Round(logUniform(rng, minBurst, maxBurst)))
}

// drawWindow: whole seconds from 2 s on, as real windows are written.
func drawWindow(rng *rand.Rand) time.Duration {
	w := time.Duration(logUniform(rng, float64(minWindow), float64(maxWindow)))
	if w >= 2*time.Second {
		return w.Round(time.Second)
	}
	return w.Round(100 * time.Millisecond)
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// drawParams sets algo's parameters and variants.
func drawParams(rng *rand.Rand, algo string, q url.Values) {
	switch algo {
	case "token_bucket":
		q.Set("rate", drawRate(rng))
		q.Set("burst", strconv.Itoa(drawCount(rng)))
		if rng.Float64() < shareRefill {
			q.Set("refill", []string{"500ms", "1s", "2s", "5s"}[rng.IntN(4)])
		}
	case "fixed_window", "sliding_log", "sliding_counter":
		w := drawWindow(rng)
		q.Set("limit", strconv.Itoa(drawCount(rng)))
		q.Set("window", w.String())
		drawWindowVariant(rng, algo, q)
	case "leaky_shaping":
		q.Set("rate", drawRate(rng))
		switch x := rng.Float64(); {
		case x < 0.1:
			// A pacer; half of them let idle time be caught up, serving
			// the first requests of a burst at once (uber-go/ratelimit's
			// slack, 10 by default).
			q.Set("burst", "unbounded")
			if x < 0.05 {
				q.Set("delay", strconv.Itoa(1+rng.IntN(maxSlack)))
			}
		default:
			b := rng.IntN(50)
			q.Set("burst", strconv.Itoa(b))
			if b > 1 && x < 0.3 {
				q.Set("delay", strconv.Itoa(1+rng.IntN(b-1)))
			}
		}
	case "concurrency":
		q.Set("max-inflight", strconv.Itoa(1+rng.IntN(50)))
		q.Set("latency", fmt.Sprintf("%dms", 20+rng.IntN(180)))
	case "tiers":
		if rng.Float64() < shareWindowPool {
			drawWindowPool(rng, q)
			break
		}
		burst := 1 + rng.IntN(20)
		q.Set("mode", []string{"all", "either"}[rng.IntN(2)])
		q.Set("t1", fmt.Sprintf("token_bucket:rate=%s,burst=%d", drawRate(rng), burst))
		q.Set("t2", fmt.Sprintf("fixed_window:limit=%d,window=%s", burst+1+rng.IntN(200), drawWindow(rng)))
	}
	drawScope(rng, algo, q)
}

// poolPrimaryWindows are the short windows a window primary is drawn
// with: the ones people write (a second, two, five).
var poolPrimaryWindows = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}

// drawWindowPool: a short window with a burst pool beside it over a
// window at least five times longer, either admitting, of one family (one
// library's two limits); half of them count denied attempts in both.
func drawWindowPool(rng *rand.Rand, q url.Values) {
	algo := []string{"sliding_log", "fixed_window"}[rng.IntN(2)]
	w := poolPrimaryWindows[rng.IntN(len(poolPrimaryWindows))]
	poolW := max(drawWindow(rng), 5*w)
	limit := 1 + rng.IntN(20)
	extra := ""
	if algo == "fixed_window" {
		extra = ",align=first"
	}
	if rng.Float64() < 0.5 {
		extra += ",count-rejected=on"
	}
	q.Set("mode", "either")
	q.Set("t1", fmt.Sprintf("%s:limit=%d,window=%s%s", algo, limit, w, extra))
	q.Set("t2", fmt.Sprintf("%s:limit=%d,window=%s%s", algo, limit+1+rng.IntN(200), poolW, extra))
}

// drawWindowVariant: alignment, denied attempts counted, penalties.
func drawWindowVariant(rng *rand.Rand, algo string, q url.Values) {
	switch algo {
	case "fixed_window":
		q.Set("align", []string{"wall", "wall", "first", "start"}[rng.IntN(4)])
		if rng.Float64() < sharePenalty {
			q.Set("penalty", "restart")
		}
	case "sliding_counter":
		if rng.Float64() < 0.25 {
			q.Set("align", "start")
		}
		fallthrough
	case "sliding_log":
		if rng.Float64() < shareCountRejected {
			q.Set("count-rejected", "on")
		}
	}
}

// drawScope: whom the limit counts (a rate limit's scope trials).
func drawScope(rng *rand.Rand, algo string, q url.Values) {
	if algo == "none" || algo == "concurrency" {
		return
	}
	switch x := rng.Float64(); {
	case x < shareScopeIP:
		q.Set("scope", "ip")
	case x < shareScopeIP+shareScopeConn && algo == "token_bucket":
		q.Set("scope", "connection")
	}
}

// drawNetwork: the link, its stalls, replicas and faults.
func drawNetwork(rng *rand.Rand, q url.Values) {
	rtt := time.Duration(logUniform(rng, float64(minRTT), float64(maxRTT))).Round(10 * time.Microsecond)
	q.Set("rtt", rtt.String())
	if rng.Float64() < shareJitter {
		q.Set("jitter", (time.Duration(rng.Int64N(int64(rtt)/4 + 1))).Round(10*time.Microsecond).String())
	}
	if rng.Float64() < shareStall {
		q.Set("stall", fmt.Sprintf("%dms", 10+rng.IntN(11)))
	}
	if rng.Float64() < shareReplicas && q.Get("scope") == "" {
		q.Set("replicas", strconv.Itoa(2+rng.IntN(2)))
	}
	if rng.Float64() < shareFault {
		q.Set("fail", []string{sim.FailDie, sim.FailRefuse, sim.Fail500, sim.FailHang}[rng.IntN(4)])
	}
}

// truthOf is the limiter a spec names.
func truthOf(spec string) (refserver.Options, sim.Config, error) {
	cfg, err := sim.ParseSpec(spec)
	return cfg.Server, cfg, err
}
