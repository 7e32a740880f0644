package nginx

import (
	"fmt"
	"strconv"
	"strings"
)

// Zone is one limit_req_zone and the limit_req directives that use it.
type Zone struct {
	Name string // zone=NAME:size
	Key  string // e.g. "$binary_remote_addr", or a constant for one global bucket
	Size string // e.g. "10m"
	// Rate in requests per second after nginx's conversion to an integer
	// number of thousandths of a request per second: rate=1r/m gives 0.016.
	Rate float64
	// RateMilli is the rate exactly as nginx stores it: thousandths of a
	// request per second (rate=1r/m → 16, rate=10r/s → 10000).
	RateMilli int64
	RateSpec  string // as written, e.g. "1r/m" (nginx's default when absent: "1r/s")
	Line      int    // line of the limit_req_zone directive in the text
	Limits    []Limit
}

// Interval is the time nginx needs to forgive one request at this zone's
// rate, 1000/RateMilli seconds (62.5 s for rate=1r/m).
func (z Zone) Interval() float64 { return 1 / z.Rate }

// Limit is one limit_req directive.
type Limit struct {
	Zone  string
	Burst int // burst=N; 0 when absent
	// NoDelay is set by `nodelay`: excess requests up to the burst pass at once.
	NoDelay bool
	// Delay is `delay=N`: the first N excess requests pass at once, the rest
	// are queued. 0 when absent (every excess request is queued) or NoDelay.
	Delay int
	// Status is the status nginx rejects with here: the limit_req_status in
	// effect for the block that holds this limit_req (inherited from outer
	// blocks), 503 by default.
	Status int
	// DryRun is limit_req_dry_run in effect here: nothing is rejected or
	// delayed, only counted.
	DryRun bool
	// Context names the enclosing blocks, e.g. "http > server > location /api";
	// "" at the top of the text (a snippet's server level).
	Context string
	Line    int
}

// ParseZones reads an nginx configuration text (a snippet or a full
// nginx.conf) and returns its limit_req zones, each with the limit_req
// directives that use it, in the order the zones are defined. Parameters are
// checked as nginx checks them (nginx -t would reject the same texts), and a
// limit_req naming an undefined zone is an error. include directives are not
// followed.
func ParseZones(configText string) ([]Zone, error) {
	stmts, err := parse("config", configText)
	if err != nil {
		se := err.(*syntaxError)
		return nil, fmt.Errorf("line %d: %s", se.line, se.msg)
	}
	var zones []Zone
	index := map[string]int{}
	var zoneErr error
	walk(stmts, nil, func(s *stmt, path []*stmt) bool {
		if s.name != "limit_req_zone" || zoneErr != nil {
			return true
		}
		z, err := parseZone(s)
		if err != nil {
			zoneErr = fmt.Errorf("line %d: %v", s.endLine, err)
			return false
		}
		if _, dup := index[z.Name]; dup {
			zoneErr = fmt.Errorf("line %d: limit_req_zone %q is defined twice", s.endLine, z.Name)
			return false
		}
		index[z.Name] = len(zones)
		zones = append(zones, z)
		return true
	})
	if zoneErr != nil {
		return nil, zoneErr
	}
	var limErr error
	walkLimits(stmts, "", 503, false, func(s *stmt, ctx string, status int, dry bool) {
		if limErr != nil {
			return
		}
		l, err := parseLimit(s)
		if err != nil {
			limErr = fmt.Errorf("line %d: %v", s.endLine, err)
			return
		}
		i, ok := index[l.Zone]
		if !ok {
			limErr = fmt.Errorf("line %d: limit_req uses zone %q, which no limit_req_zone defines (nginx: zero size shared memory zone %q)", s.endLine, l.Zone, l.Zone)
			return
		}
		l.Status, l.DryRun, l.Context = status, dry, ctx
		zones[i].Limits = append(zones[i].Limits, l)
	})
	if limErr != nil {
		return nil, limErr
	}
	return zones, nil
}

// walk visits every statement depth-first; path holds the enclosing blocks.
// Returning false from fn skips the statement's block.
func walk(stmts []*stmt, path []*stmt, fn func(s *stmt, path []*stmt) bool) {
	for _, s := range stmts {
		if fn(s, path) && s.hasBlock {
			walk(s.block, append(path[:len(path):len(path)], s), fn)
		}
	}
}

// walkLimits visits limit_req directives with the limit_req_status and
// limit_req_dry_run in effect for their block.
func walkLimits(stmts []*stmt, ctx string, status int, dry bool, fn func(*stmt, string, int, bool)) {
	for _, s := range stmts {
		switch s.name {
		case "limit_req_status":
			if v, err := strconv.Atoi(s.arg(0)); err == nil {
				status = v
			}
		case "limit_req_dry_run":
			dry = s.arg(0) == "on"
		}
	}
	for _, s := range stmts {
		if s.name == "limit_req" && !s.hasBlock {
			fn(s, ctx, status, dry)
		}
		if s.hasBlock {
			name := s.name
			for _, a := range s.args {
				name += " " + a.val
			}
			sub := name
			if ctx != "" {
				sub = ctx + " > " + name
			}
			walkLimits(s.block, sub, status, dry, fn)
		}
	}
}

func parseZone(s *stmt) (Zone, error) {
	if len(s.args) != 3 {
		return Zone{}, fmt.Errorf(`invalid number of arguments in "limit_req_zone" directive`)
	}
	z := Zone{Key: s.arg(0), Line: s.endLine, RateSpec: "1r/s", RateMilli: 1000}
	for _, a := range s.args[1:] {
		v := a.val
		switch {
		case strings.HasPrefix(v, "zone="):
			name, size, ok := strings.Cut(v[len("zone="):], ":")
			if !ok || size == "" {
				return Zone{}, fmt.Errorf("invalid zone size %q", v)
			}
			z.Name, z.Size = name, size
		case strings.HasPrefix(v, "rate="):
			spec := v[len("rate="):]
			milli, err := parseRate(spec)
			if err != nil {
				return Zone{}, fmt.Errorf("invalid rate %q", v)
			}
			z.RateSpec, z.RateMilli = spec, milli
		default:
			return Zone{}, fmt.Errorf("invalid parameter %q", v)
		}
	}
	if z.Name == "" {
		return Zone{}, fmt.Errorf(`"limit_req_zone" must have "zone" parameter`)
	}
	if z.RateMilli == 0 {
		// rate=1r/m and up convert to at least 16; only rates below
		// 1000/60 r/m could get here, and nginx cannot express them.
		return Zone{}, fmt.Errorf("rate %q is below nginx's resolution of 0.001 r/s", z.RateSpec)
	}
	z.Rate = float64(z.RateMilli) / 1000
	return z, nil
}

// parseRate converts "10r/s", "30r/m" or "10" the way ngx_http_limit_req_zone
// does: an integer, scaled to thousandths per second with integer division.
func parseRate(spec string) (int64, error) {
	scale := int64(1)
	num := spec
	switch {
	case strings.HasSuffix(spec, "r/s"):
		num = strings.TrimSuffix(spec, "r/s")
	case strings.HasSuffix(spec, "r/m"):
		num, scale = strings.TrimSuffix(spec, "r/m"), 60
	}
	r, err := atoiNginx(num)
	if err != nil || r <= 0 {
		return 0, fmt.Errorf("invalid rate")
	}
	return r * 1000 / scale, nil
}

// atoiNginx accepts what ngx_atoi accepts: one or more decimal digits.
func atoiNginx(s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty number")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a number: %q", s)
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

func parseLimit(s *stmt) (Limit, error) {
	if len(s.args) < 1 || len(s.args) > 3 {
		return Limit{}, fmt.Errorf(`invalid number of arguments in "limit_req" directive`)
	}
	l := Limit{Line: s.endLine}
	for _, a := range s.args {
		v := a.val
		switch {
		case strings.HasPrefix(v, "zone="):
			l.Zone = v[len("zone="):]
		case strings.HasPrefix(v, "burst="):
			b, err := atoiNginx(v[len("burst="):])
			if err != nil || b <= 0 {
				return Limit{}, fmt.Errorf("invalid burst value %q", v)
			}
			l.Burst = int(b)
		case strings.HasPrefix(v, "delay="):
			d, err := atoiNginx(v[len("delay="):])
			if err != nil || d <= 0 {
				return Limit{}, fmt.Errorf("invalid delay value %q", v)
			}
			l.Delay = int(d)
		case v == "nodelay":
			l.NoDelay = true
		default:
			return Limit{}, fmt.Errorf("invalid parameter %q", v)
		}
	}
	if l.Zone == "" {
		return Limit{}, fmt.Errorf(`"limit_req" must have "zone" parameter`)
	}
	if l.NoDelay {
		l.Delay = 0
	}
	return l, nil
}
