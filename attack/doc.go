// Package attack is ratecheck's load engine and its attack profiles, usable
// as a Go library: it sends precisely timed HTTP traffic at a target and
// reports what the target's rate limiter did with it.
//
// Run is the entry point: give it a profile (Steady, Burst, Boundary,
// Clients for storm and backoff), the request to send and the run's
// bounds, and it returns the profile's Report with the run's notes, its
// elapsed time, whether a budget or an interruption cut it short, and
// whether the target could be tested at all. With RunOptions.Out it also
// streams every result to a file as it arrives, compact for a name ending
// .rcs and JSON Lines otherwise (package results holds that record:
// results.ReadStream reads either back, with the same typed metrics).
//
// The engine is an open model: send times are fixed before the run and never
// wait for responses, so a slow server cannot hide its slowness by slowing
// the load (no coordinated omission). Each request records when it was
// scheduled, when it really went out, its first byte, completion, status,
// error and rate-limit headers. Every target, http or https, goes through
// a lean HTTP/1.1 client over keep-alive connections (h1.go, tls.go): it is
// what lets a burst be released at one instant and the pacer hold
// sub-millisecond error; Options.HTTP2 speaks HTTP/2 instead (h2.go).
//
// Every run is bounded (Options: requests, time, connections) and rates are
// over the time actually spent. A profile or options that cannot give the
// experiment they describe — a burst larger than the request budget or the
// connection limit — are a *ConfigError before anything is sent.
//
// Files: run.go (the entry point), validate.go (refusals before sending),
// clock.go (precise waits, pacing threads), request.go (the request
// template), h1.go, tls.go and h2.go (the clients), rawtcp_linux.go (TCP
// reads and writes that keep the runtime's P), pool.go (connections),
// pacer.go (paced sends), pacingpriority.go (the dispatcher's real-time
// priority), release.go (bursts), cpu.go (the run's CPU), shard.go (a
// shard's part of the plan), engine.go (the engine, budgets) and one file
// per profile.
package attack
