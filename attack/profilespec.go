package attack

import (
	"strings"

	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// ProfileSpec is a profile named with every profile's parameters, as a
// command line gives them all at once: Profile keeps those of the one
// named. Rates are written as the user wrote them (10/s, 600/m; "max" for
// steady's), so that a bad one is named by its own field.
type ProfileSpec struct {
	Name     string // a name of ProfileNames
	Rate     string // steady's Rate
	TailRate string // burst's TailRate
	Steady   Steady
	Burst    Burst
	Boundary Boundary
	Clients  Clients // Backoff comes from the name
}

// Profile is the profile the spec names, with its parameters. Messages
// name fields as o.Names says.
func (s ProfileSpec) Profile(o Options) (Profile, error) {
	names := strings.Join(ProfileNames(), ", ")
	switch s.Name {
	case "steady":
		r, err := parseRate(o, "Steady.Rate", s.Rate, true)
		p := s.Steady
		p.Rate = r
		return p, err
	case "burst":
		r, err := parseRate(o, "Burst.TailRate", s.TailRate, false)
		p := s.Burst
		p.TailRate = r
		return p, err
	case "boundary":
		return s.Boundary, nil
	case "storm", "backoff":
		p := s.Clients
		p.Backoff = s.Name == "backoff"
		return p, nil
	case "":
		return nil, configErr("ProfileSpec.Name", "%s is required: one of %s", o.name("ProfileSpec.Name"), names)
	}
	return nil, configErr("ProfileSpec.Name", "unknown profile %q: use one of %s", s.Name, names)
}

// Build is the profile the spec names, shard's part of it, checked against
// the options (the connection limit, the budgets): a run that cannot be
// made is a *ConfigError before anything is sent.
func (s ProfileSpec) Build(o Options, shard results.Shard) (Profile, error) {
	p, err := s.Profile(o)
	if err != nil {
		return nil, err
	}
	if o.MaxConns < 0 {
		return nil, configErr("Options.MaxConns", "%s must be ≥ 1", o.name("Options.MaxConns"))
	}
	if !shard.Whole() { // a shard holds only its part open
		p = p.(Shardable).Sharded(shard)
	}
	if v, ok := p.(Validator); ok {
		if err := v.Validate(o); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// ShardBudget is the request budget each of n shards needs for its part
// of the plan the spec names, when o.MaxRequests cannot hold it (package
// ShardBudget: only a steady plan's grows with its rate and duration); 0
// when it can. given says the user set o.MaxRequests: too small, it is an
// error instead.
func (s ProfileSpec) ShardBudget(o Options, n int, given bool) (int, error) {
	var plan Profile = Steady{}
	if s.Name == "steady" {
		p, err := s.Profile(o)
		if err != nil {
			return 0, err
		}
		plan = p
	}
	return ShardBudget(plan, n, o, given)
}

// parseRate reads a rate (limiter.ParseRate), and "max" where allowed:
// steady's closed loop, as fast as the connections go (0).
func parseRate(o Options, field, v string, allowMax bool) (float64, error) {
	if allowMax && v == "max" {
		return 0, nil
	}
	r, err := limiter.ParseRate(v)
	if err != nil {
		return 0, configErr(field, "%s: %v", o.name(field), err)
	}
	return r, nil
}
