// Package attack is ratecheck's load engine and its profiles.
//
// The engine is an open model: send times are fixed before the run and never
// wait for responses, so a slow server cannot hide its slowness by slowing
// the load (no coordinated omission). Each request records when it was
// scheduled, when it really went out, its first byte, completion, status,
// error and rate-limit headers. Plain-http targets use a lean HTTP/1.1
// client over raw keep-alive connections (h1.go): it is what lets a burst be
// released at one instant and the pacer hold sub-millisecond error; https
// targets go through net/http, which negotiates HTTP/2 when offered.
//
// Files: clock.go (precise waits), request.go (the request template),
// h1.go and stdclient.go (the two clients), result.go and stream.go (the
// results record and its JSON Lines file), metrics.go (HDR aggregation),
// engine.go (schedules, bursts, client populations, budgets) and one file
// per profile.
package attack
