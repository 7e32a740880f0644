// Package attack is ratecheck's load engine and its profiles.
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
// Files: clock.go (precise waits, pacing threads), request.go (the request
// template), h1.go, tls.go and h2.go (the clients), pool.go (connections),
// pacer.go (paced sends), release.go (bursts), cpu.go (the run's CPU),
// result.go and stream.go (the results record and its JSON Lines file),
// metrics.go (HDR aggregation), engine.go (the engine, budgets) and one file
// per profile.
package attack
