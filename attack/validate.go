package attack

// Checks that refuse a run before anything is sent: a profile and options
// that cannot give the experiment they describe are a *ConfigError, never a
// quietly different run.

// validate checks options already filled with their defaults.
func (o Options) validate() error {
	if o.MaxConns > ConnsCeiling {
		return configErr("Options.MaxConns", "%s %d is beyond the ceiling of %d simultaneous connections: lower it",
			o.name("Options.MaxConns"), o.MaxConns, ConnsCeiling)
	}
	return nil
}

// atOnce checks that a phase holding n requests in flight together (a
// burst's volley, closed-loop clients) fits the connection limit: each holds
// one connection, and a burst cannot be split into waves without measuring
// a different thing.
func atOnce(o Options, field string, n int) error {
	switch {
	case n > ConnsCeiling:
		return configErr(field, "%s %d is beyond the ceiling of %d requests in flight at once (one connection each): lower it",
			o.name(field), n, ConnsCeiling)
	case n > o.MaxConns:
		return configErr(field, "%s %d needs %d connections at once, more than %s %d allows: raise %s (at most %d) or lower %s",
			o.name(field), n, n, o.name("Options.MaxConns"), o.MaxConns, o.name("Options.MaxConns"), ConnsCeiling, o.name(field))
	}
	return nil
}

func positive(o Options, field string, ok bool, what string) error {
	if ok {
		return nil
	}
	return configErr(field, "%s must be %s", o.name(field), what)
}

// Each Validate takes the options as given to New or Run (zero fields
// mean their defaults).

// Validate refuses a steady run that cannot be made.
func (p Steady) Validate(o Options) error {
	o.fill()
	if err := positive(o, "Steady.Duration", p.Duration > 0, "positive"); err != nil {
		return err
	}
	if err := positive(o, "Steady.Rate", p.Rate >= 0, "≥ 0 (0 = as fast as possible)"); err != nil {
		return err
	}
	if p.Rate == 0 {
		return atOnce(o, "Steady.Conns", max(p.Conns, 1))
	}
	return nil
}

// Validate refuses a burst larger than the connection limit or the request
// budget: either would release fewer than K at the instant.
func (p Burst) Validate(o Options) error {
	o.fill()
	if err := positive(o, "Burst.K", p.K >= 1, "≥ 1"); err != nil {
		return err
	}
	// A shard holds only its share of the burst open.
	k := p.Shard.Share(p.K)
	if err := atOnce(o, "Burst.K", k); err != nil {
		return err
	}
	if k > o.MaxRequests {
		return configErr("Burst.K", "%s %d is more than the request budget %s %d: raise %s or lower %s",
			o.name("Burst.K"), k, o.name("Options.MaxRequests"), o.MaxRequests, o.name("Options.MaxRequests"), o.name("Burst.K"))
	}
	if p.K < max(p.Shard.N, 1) {
		return configErr("Burst.K", "%s %d cannot be split into %d shards: each must release at least one request", o.name("Burst.K"), p.K, p.Shard.N)
	}
	for _, c := range []struct {
		field string
		ok    bool
	}{{"Burst.Idle", p.Idle >= 0}, {"Burst.Tail", p.Tail >= 0}, {"Burst.TailRate", p.TailRate >= 0}} {
		if err := positive(o, c.field, c.ok, "≥ 0"); err != nil {
			return err
		}
	}
	return nil
}

// Validate refuses a straddle whose two volleys of L cannot be in flight
// together.
func (p Boundary) Validate(o Options) error {
	o.fill()
	if err := positive(o, "Boundary.Limit", p.Limit >= 0, "≥ 0 (0 = learn it)"); err != nil {
		return err
	}
	if err := positive(o, "Boundary.Window", p.Window >= 0, "≥ 0 (0 = learn it)"); err != nil {
		return err
	}
	if !p.Shard.Whole() {
		if p.Limit == 0 || p.Window == 0 {
			return configErr("Boundary.Limit", "a sharded boundary run needs %s and %s: each shard sends its share of the volleys of L, and no shard can learn L or W alone while the others spend the same quota",
				o.name("Boundary.Limit"), o.name("Boundary.Window"))
		}
		if p.Limit < p.Shard.N {
			return configErr("Boundary.Limit", "%s %d cannot be split into %d shards: each volley needs at least one request per shard", o.name("Boundary.Limit"), p.Limit, p.Shard.N)
		}
		return straddleFits(o, p.Shard.Share(p.Limit))
	}
	if p.Limit > 0 {
		return straddleFits(o, p.Limit)
	}
	return nil
}

// straddleFits: the volley after the boundary is prepared while the one
// before may still be in flight, so 2L connections may be open at once.
func straddleFits(o Options, limit int) error {
	if 2*limit > o.MaxConns {
		return configErr("Boundary.Limit", "the straddle of a limit of %d holds %d requests in flight at once, more than %s %d allows: raise %s (at most %d)",
			limit, 2*limit, o.name("Options.MaxConns"), o.MaxConns, o.name("Options.MaxConns"), ConnsCeiling)
	}
	return nil
}

// Validate refuses a client population larger than the connection limit.
func (p Clients) Validate(o Options) error {
	o.fill()
	if err := positive(o, "Clients.N", p.N >= 1, "≥ 1"); err != nil {
		return err
	}
	if err := positive(o, "Clients.Goal", p.Goal >= 1, "≥ 1"); err != nil {
		return err
	}
	if p.N < max(p.Shard.N, 1) {
		return configErr("Clients.N", "%s %d cannot be split into %d shards: each needs at least one client", o.name("Clients.N"), p.N, p.Shard.N)
	}
	return atOnce(o, "Clients.N", p.Shard.Share(p.N))
}
