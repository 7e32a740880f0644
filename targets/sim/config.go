// Package sim is a simulated network and server: the probe's plan runs on
// it exactly as on real sockets (it is an attack.Network), but on virtual
// time, seeded and replayable. The server side is the reference server's
// own response contract (refserver.Handler.Decide) over the pure
// targets/limiter models, so what is simulated is what `serve` and
// builtin: serve; the network between adds round trips, jitter, stalls of
// the client's reader and of the server, connections and source
// addresses, and faults (a server that dies, refuses, answers 500 or
// hangs from some instant on). A minute of probing takes the fits' CPU,
// not a minute, and the same seed gives the same results stream byte for
// byte.
package sim

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/targets/refserver"
)

// Prefix starts a target string that names a simulated limiter.
const Prefix = "sim:"

// The faults a simulated server can develop (Config.Fail).
const (
	FailDie    = "die"    // from FailAt on, connections are reset and new ones refused
	FailRefuse = "refuse" // from FailAt on, new requests are refused (answers in flight arrive)
	Fail500    = "500"    // from FailAt on, every answer is a 500 without quota headers
	FailHang   = "hang"   // from FailAt on, nothing is answered: requests time out
)

// Defaults of the network.
const (
	// DefaultRTT is a loopback round trip with a little work behind it.
	DefaultRTT = 200 * time.Microsecond
	// defaultStallShare of the answers start a stall when Stall is set:
	// the recorded runs of a loaded 2-core machine show a stall of 10-20
	// ms every few dozen answers.
	defaultStallShare = 0.03
	// failFrom and failSpan: a fault with no instant starts at a random
	// one in [failFrom, failFrom+failSpan), inside most probes.
	failFrom = time.Second
	failSpan = 20 * time.Second
	// epochSpan: the run's wall-clock start is a random instant of an
	// hour (from the seed), so wall-aligned windows of any length up to
	// an hour fall at any phase of the probe.
	epochSpan = time.Hour
)

// epochBase is the simulated wall clock's origin: a fixed instant, so a
// seed gives the same stream on any day.
var epochBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Config is a simulated target: the server, the network to it, and the
// seed every random draw comes from.
type Config struct {
	Server refserver.Options
	// Replicas counting alone behind a round-robin front (0 or 1: one
	// server).
	Replicas int
	RTT      time.Duration // the link's round trip, both ways
	// Jitter is the mean of the exponential delay each one-way trip adds.
	Jitter time.Duration
	// Stall is the longest stall of the client's reader or of the
	// server: answers (decisions) that fall in it wait for its end and
	// come out together (the server's decided in any order, drawn from
	// the seed). StallShare of the answers (decisions) start one.
	Stall      time.Duration
	StallShare float64
	// Fail is one of the Fail* faults ("" none), from FailAt on (0: a
	// random instant).
	Fail   string
	FailAt time.Duration
	Seed   uint64
	// Interrupt, when set, cancels the run at a virtual instant, as a
	// Ctrl-C would: Cancel must cancel the context the run was begun with.
	Interrupt *Interrupt
}

// Interrupt is a cancellation at a virtual instant.
type Interrupt struct {
	At     time.Duration
	Cancel func()
}

// networkKeys are the keys a sim: target takes besides the builtin: ones.
var networkKeys = []string{"rtt", "jitter", "stall", "stall-share", "fail", "fail-at", "seed", "replicas"}

// NetworkKeys lists them (a new slice each call).
func NetworkKeys() []string { return slices.Clone(networkKeys) }

// ParseSpec reads "sim:ALGO?key=value&…": the builtin: keys of the server
// and the network's (rtt, jitter, stall, stall-share, fail, fail-at,
// seed, replicas).
func ParseSpec(spec string) (Config, error) {
	rest, ok := strings.CutPrefix(spec, Prefix)
	if !ok {
		return Config{}, fmt.Errorf("%q is not a sim: target", spec)
	}
	algo, query, _ := strings.Cut(rest, "?")
	vals, err := url.ParseQuery(query)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %v", spec, err)
	}
	c := Config{RTT: DefaultRTT}
	server := url.Values{}
	for key, vs := range vals {
		if !slices.Contains(networkKeys, key) {
			server[key] = vs
			continue
		}
		if len(vs) > 1 {
			return Config{}, fmt.Errorf("%s: key %q given %d times: give it once", spec, key, len(vs))
		}
		if err := c.set(key, vs[0]); err != nil {
			return Config{}, fmt.Errorf("%s: %v", spec, err)
		}
	}
	builtin := refserver.BuiltinPrefix + algo
	if len(server) > 0 {
		builtin += "?" + server.Encode()
	}
	if c.Server, err = refserver.ParseBuiltin(builtin); err != nil {
		return Config{}, fmt.Errorf("%s: %v (the network's keys: %s)", spec, err, strings.Join(networkKeys, ", "))
	}
	return c, c.Validate()
}

// set assigns one network key.
func (c *Config) set(key, v string) error {
	var err error
	switch key {
	case "rtt", "jitter", "stall", "fail-at":
		var d time.Duration
		if d, err = time.ParseDuration(v); err == nil && d < 0 {
			err = fmt.Errorf("negative")
		}
		if err != nil {
			return fmt.Errorf("%s %q: write a non-negative duration like 20ms", key, v)
		}
		*map[string]*time.Duration{"rtt": &c.RTT, "jitter": &c.Jitter, "stall": &c.Stall, "fail-at": &c.FailAt}[key] = d
	case "stall-share":
		if c.StallShare, err = strconv.ParseFloat(v, 64); err != nil || c.StallShare < 0 || c.StallShare > 1 {
			return fmt.Errorf("stall-share %q: a share between 0 and 1", v)
		}
	case "fail":
		if !slices.Contains([]string{FailDie, FailRefuse, Fail500, FailHang}, v) {
			return fmt.Errorf("fail %q: use %s, %s, %s or %s", v, FailDie, FailRefuse, Fail500, FailHang)
		}
		c.Fail = v
	case "seed":
		if c.Seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf("seed %q: a whole number", v)
		}
	case "replicas":
		if c.Replicas, err = strconv.Atoi(v); err != nil || c.Replicas < 1 || c.Replicas > maxReplicas {
			return fmt.Errorf("replicas %q: a whole number from 1 to %d", v, maxReplicas)
		}
	}
	return nil
}

// maxReplicas bounds a simulated fleet (as builtin:fleet's).
const maxReplicas = 64

// Validate refuses what the simulator cannot model.
func (c Config) Validate() error {
	if c.Server.Fault.Has(refserver.FaultRace) {
		return fmt.Errorf("fault %s needs real concurrency: use a builtin: target", refserver.FaultRace)
	}
	return nil
}

// ReplaySpec is spec with its seed written out (0 when it named none):
// the one string that replays a simulated probe.
func ReplaySpec(spec string) string {
	algo, query, _ := strings.Cut(spec, "?")
	vals, err := url.ParseQuery(query)
	if err != nil || vals.Has("seed") {
		return spec
	}
	if query != "" {
		return algo + "?" + query + "&seed=0"
	}
	return algo + "?seed=0"
}

// FailInstant is when the fault starts: FailAt, or an instant drawn from
// the seed when FailAt is 0 (a stream of its own, so it does not shift the
// network's draws).
func (c Config) FailInstant() time.Duration {
	if c.FailAt > 0 || c.Fail == "" {
		return c.FailAt
	}
	r := rand.New(rand.NewPCG(c.Seed, 2))
	return failFrom + time.Duration(r.Int64N(int64(failSpan)))
}

// rng is the run's one source of randomness: every draw in a fixed order.
func (c Config) rng() *rand.Rand {
	return rand.New(rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15))
}

// wakeRNG is the seed's stream for the order a server stall's requests
// are decided in (Network.held).
func (c Config) wakeRNG() *rand.Rand {
	return rand.New(rand.NewPCG(c.Seed, c.Seed^0x5851f42d4c957f2d))
}

// FromBuiltin is the sim: spec of a builtin: target behind the network
// network describes ("rtt=1ms&seed=3"): the same limiter, simulated.
func FromBuiltin(builtin, network string) string {
	s := Prefix + strings.TrimPrefix(builtin, refserver.BuiltinPrefix)
	switch {
	case network == "":
		return s
	case strings.Contains(s, "?"):
		return s + "&" + network
	}
	return s + "?" + network
}
