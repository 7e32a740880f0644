package limiter

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the full parameter set of a reference limiter. Only the fields
// its family uses matter; Validate says which are required.
type Config struct {
	Algo string
	// Rate is the sustained rate in requests per second (token_bucket,
	// leaky_shaping).
	Rate float64
	// Burst is the bucket capacity (token_bucket) or the queue length beyond
	// the request being served (leaky_shaping, as nginx's burst=).
	Burst int
	// DelayAfter is nginx's delay=N for leaky_shaping: the first N excess
	// requests pass undelayed, later ones queue.
	DelayAfter int
	// Limit and Window describe the window algorithms: Limit per Window.
	Limit  int
	Window time.Duration
	// Align is the grid of fixed_window and sliding_counter: AlignWall,
	// AlignFirst or AlignStart.
	Align string
	// Penalty is what a rejected request does to a fixed_window's state:
	// PenaltyNone ("" too) leaves it alone; PenaltyRestart restarts the
	// key's window at the rejection, so a client that keeps sending over
	// the limit stays blocked until it has been silent for a whole window
	// (express-rate-limit's and ulule/limiter's "continue exceeding").
	Penalty string
	// MaxInflight is the concurrency cap.
	MaxInflight int
	// CountRejected: a denied attempt consumes quota too (fixed_window,
	// sliding_log, sliding_counter), as HAProxy's http_req_rate counts a
	// request when it is tracked, before any deny: a client that keeps
	// sending above the limit stays blocked until it pauses.
	CountRejected bool
	// Block, when positive, shuts a key for this long after any rejection
	// (any family but none): every request in that time is rejected without
	// reaching the algorithm (rate-limiter-flexible's blockDuration,
	// Cloudflare's penalty period).
	Block time.Duration
	// QueueUnbounded makes leaky_shaping a pacer that never rejects
	// (burst=unbounded; uber-go/ratelimit): every request is queued and
	// released 1/Rate after the one before it, however long the backlog.
	QueueUnbounded bool
	// RefillEvery, when positive, makes a token_bucket refill in clumps:
	// Rate·RefillEvery tokens at once at every instant Origin + k·RefillEvery
	// (older Envoy's tokens_per_fill every fill_interval, bucket4j's
	// refillIntervally). Zero is the continuous refill.
	RefillEvery time.Duration
	// Origin anchors an AlignStart grid, and an interval refill's fill
	// instants: windows open (fills happen) at Origin + k·Window (k·
	// RefillEvery) for every integer k, at a phase that does not follow the
	// client (a server that anchored its grid when it started; the
	// reference server sets it when it starts). Zero is the wall grid.
	Origin time.Time
	// TierMode and Tiers describe Algo Tiers, two limits on one key
	// (tiers.go): TiersAll (every tier must admit) or TiersEither (the
	// first admits, else the second).
	TierMode string
	Tiers    [2]Tier
}

// Validate reports the first thing wrong with cfg, phrased for a user who
// typed it on the command line.
func (c Config) Validate() error {
	if !slices.Contains(families[:], c.Algo) {
		return fmt.Errorf("unknown algorithm %q: use one of %s", c.Algo, strings.Join(families[:], ", "))
	}
	switch c.Algo {
	case TokenBucket, LeakyShaping:
		if !(c.Rate > 0) || math.IsInf(c.Rate, 1) {
			return fmt.Errorf("%s needs a positive, finite rate, e.g. rate=10/s", c.Algo)
		}
		if c.Burst < 0 {
			return fmt.Errorf("burst must be ≥ 0, got %d", c.Burst)
		}
		if c.QueueUnbounded && c.Algo != LeakyShaping {
			return fmt.Errorf("burst=unbounded applies to leaky_shaping only (a pacer that never rejects), not %s", c.Algo)
		}
		if c.Algo == TokenBucket && c.Burst < 1 {
			return fmt.Errorf("token_bucket needs a capacity ≥ 1, e.g. burst=20")
		}
		if c.DelayAfter < 0 {
			return fmt.Errorf("delay must be ≥ 0, got %d", c.DelayAfter)
		}
		if err := c.validateRefill(); err != nil {
			return err
		}
	case FixedWindow, SlidingLog, SlidingCounter:
		if c.Limit < 1 {
			return fmt.Errorf("%s needs a limit ≥ 1, e.g. limit=100", c.Algo)
		}
		if c.Window <= 0 {
			return fmt.Errorf("%s needs a positive window, e.g. window=1m", c.Algo)
		}
		if c.Algo == FixedWindow && c.Align != AlignWall && c.Align != AlignFirst && c.Align != AlignStart {
			return fmt.Errorf("align must be %q, %q or %q, got %q", AlignWall, AlignFirst, AlignStart, c.Align)
		}
		if c.Algo == SlidingCounter && c.Align != "" && c.Align != AlignWall && c.Align != AlignFirst && c.Align != AlignStart {
			return fmt.Errorf("sliding_counter align must be %q, %q or %q, got %q", AlignWall, AlignFirst, AlignStart, c.Align)
		}
	case Concurrency:
		if c.MaxInflight < 1 {
			return fmt.Errorf("concurrency needs max-inflight ≥ 1")
		}
	case Tiers:
		if err := c.validateTiers(); err != nil {
			return err
		}
	}
	if c.Algo != Tiers && (c.TierMode != "" || c.Tiers[0].Algo != "" || c.Tiers[1].Algo != "") {
		return fmt.Errorf("mode, t1 and t2 describe two tiers on one key: they apply to algorithm tiers only, not %s", c.Algo)
	}
	switch {
	case c.RefillEvery != 0 && c.Algo != TokenBucket:
		return fmt.Errorf("refill=%s applies to token_bucket only (tokens added at once every interval), not %s", c.RefillEvery, c.Algo)
	case c.Penalty != "" && c.Penalty != PenaltyNone && c.Penalty != PenaltyRestart:
		return fmt.Errorf("penalty must be %q or %q, got %q", PenaltyNone, PenaltyRestart, c.Penalty)
	case c.Penalty == PenaltyRestart && c.Algo != FixedWindow:
		return fmt.Errorf("penalty=%s applies to fixed_window only, not %s", PenaltyRestart, c.Algo)
	case c.CountRejected && c.Algo != FixedWindow && c.Algo != SlidingLog && c.Algo != SlidingCounter:
		return fmt.Errorf("count-rejected=on applies to fixed_window, sliding_log and sliding_counter, not %s", c.Algo)
	case c.Block < 0:
		return fmt.Errorf("block must be a positive duration, got %s", c.Block)
	case c.Block > 0 && c.Algo == None:
		return fmt.Errorf("block=%s needs a limiter that rejects: none never does", c.Block)
	}
	return nil
}

// Set assigns one parameter by its command-line name. serve's flags and the
// builtin: query string both go through here, so they accept the same words.
func (c *Config) Set(name, value string) error {
	var err error
	switch name {
	case "algo":
		c.Algo = value
	case "rate":
		c.Rate, err = ParseRate(value)
	case "burst":
		if c.QueueUnbounded = value == "unbounded"; c.QueueUnbounded {
			c.Burst = 0
			return nil
		}
		c.Burst, err = parseCount(name, value)
	case "delay":
		c.DelayAfter, err = parseCount(name, value)
	case "limit":
		c.Limit, err = parseCount(name, value)
	case "max-inflight":
		c.MaxInflight, err = parseCount(name, value)
	case "mode":
		c.TierMode = strings.TrimSpace(value)
	case "t1", "t2":
		t, terr := ParseTier(value)
		if terr != nil {
			return fmt.Errorf("%s %w", name, terr)
		}
		c.Tiers[name[1]-'1'] = t
	case "window":
		c.Window, err = parseDuration(name, value)
	case "align":
		c.Align = value
	case "penalty":
		c.Penalty = value
	case "count-rejected":
		c.CountRejected, err = parseOnOff(name, value)
	case "block":
		c.Block, err = parseOptionalDuration(name, value) // block=0s: no block
	case "refill":
		c.RefillEvery, err = parseOptionalDuration(name, value) // refill=0s: continuous
	default:
		return fmt.Errorf("unknown limiter parameter %q", name)
	}
	return err
}

// ParamNames are the names Set accepts.
var paramNames = [...]string{"algo", "rate", "burst", "refill", "delay", "limit", "window", "align", "penalty", "count-rejected", "block", "max-inflight", "mode", "t1", "t2"}

// ParamNames lists the parameters Set accepts (a new slice each call).
func ParamNames() []string { return append([]string(nil), paramNames[:]...) }

// Penalties for fixed_window (Config.Penalty).
const (
	PenaltyNone    = "none"    // a rejected request changes nothing
	PenaltyRestart = "restart" // a rejected request restarts the key's window
	// PenaltyBlock is not a penalty= value but the kind block=DURATION
	// reports (Config.PenaltyKind).
	PenaltyBlock = "block"
)

// validateRefill checks a token_bucket's refill interval: positive, and
// long enough that a fill adds at least one token (a bucket that gains half
// a request per fill is a slower interval in disguise, and would advertise
// a Retry-After no single fill keeps).
func (c Config) validateRefill() error {
	switch {
	case c.RefillEvery == 0:
		return nil
	case c.RefillEvery < 0:
		return fmt.Errorf("refill must be a positive duration (or 0s for a continuous refill), got %s", c.RefillEvery)
	case c.Algo != TokenBucket:
		return nil // Validate names the family
	}
	if per := c.Rate * c.RefillEvery.Seconds(); per < 1-tokenEps {
		least := time.Duration(math.Ceil(float64(time.Second)/c.Rate/float64(time.Millisecond))) * time.Millisecond
		return fmt.Errorf("refill=%s at rate=%s adds %.3g tokens per fill, less than one request: make rate × refill at least 1 token (e.g. refill=%s)",
			c.RefillEvery, FormatRate(c.Rate), per, least)
	}
	return nil
}

// StartAligned reports whether c, or one of its tiers, has a grid anchored
// at Origin (AlignStart): what a server sets Origin for when it starts.
func (c Config) StartAligned() bool {
	if c.Algo == Tiers {
		return c.Tiers[0].Align == AlignStart || c.Tiers[1].Align == AlignStart
	}
	return c.Align == AlignStart
}

// Restarts reports whether a rejected request restarts the window.
func (c Config) Restarts() bool { return c.Algo == FixedWindow && c.Penalty == PenaltyRestart }

// Defaults returns a Config with the defaults that make `serve --algo X`
// usable without more flags.
func Defaults() Config {
	return Config{Algo: TokenBucket, Rate: 10, Burst: 20, Limit: 100, Window: time.Minute, Align: AlignWall, MaxInflight: 10}
}

func parseOnOff(name, v string) (bool, error) {
	switch strings.TrimSpace(v) {
	case "on", "true", "1":
		return true, nil
	case "off", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("%s %q: use on or off", name, v)
}

// PenaltyKind names what a rejection does to later requests, for output:
// "restart" (the window restarts), "block" (the key is shut for Block),
// or "" for nothing.
func (c Config) PenaltyKind() string {
	switch {
	case c.Block > 0:
		return PenaltyBlock
	case c.Restarts():
		return PenaltyRestart
	}
	return ""
}

func parseCount(name, v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a whole number", name, v)
	}
	if n < 0 {
		return 0, fmt.Errorf("%s must be ≥ 0, got %d", name, n)
	}
	return n, nil
}

// parseOptionalDuration is parseDuration that also takes 0 (0s, 0ms…): the
// feature is off.
func parseOptionalDuration(name, v string) (time.Duration, error) {
	if d, err := time.ParseDuration(strings.TrimSpace(v)); err == nil && d == 0 {
		return 0, nil
	}
	return parseDuration(name, v)
}

func parseDuration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a duration: write it like 500ms, 2s or 1m", name, v)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s must be positive, got %s", name, v)
	}
	return d, nil
}

// ParseRate reads a rate such as "10/s", "600/m", "10r/s" (nginx style),
// "2.5/s", "100/1m" or "5/500ms" and returns requests per second.
func ParseRate(s string) (float64, error) {
	orig := s
	s = strings.TrimSpace(s)
	num, per, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("rate %q: write it as COUNT/UNIT, e.g. 10/s, 600/m or 5/500ms", orig)
	}
	num = strings.TrimSuffix(num, "r")
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 || n != n || n > 1e9 {
		return 0, fmt.Errorf("rate %q: %q is not a positive number (write e.g. 10/s)", orig, num)
	}
	var d time.Duration
	switch per {
	case "s":
		d = time.Second
	case "m", "min":
		d = time.Minute
	case "h":
		d = time.Hour
	default:
		d, err = time.ParseDuration(per)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("rate %q: unit %q is not s, m, h or a duration like 500ms", orig, per)
		}
	}
	return n / d.Seconds(), nil
}

// FormatRate writes r requests per second the way ParseRate reads it back.
func FormatRate(r float64) string {
	return strconv.FormatFloat(r, 'g', 6, 64) + "/s"
}

// Capacity is what the limiter admits at once after idle: a bucket's
// burst, a shaping queue's burst plus the one in service, a window's
// limit (a concurrency cap's and none's are not defined: 0).
func (c Config) Capacity() int {
	switch c.Algo {
	case TokenBucket:
		return c.Burst
	case LeakyShaping:
		return c.Burst + 1
	case FixedWindow, SlidingLog, SlidingCounter:
		return c.Limit
	}
	return 0
}
