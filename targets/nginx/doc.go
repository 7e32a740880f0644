// Package nginx runs a real nginx from a user's configuration on a loopback
// port so that ratecheck can attack an `nginx:PATH` target, and stops it
// again, whatever happens.
//
// # What Start accepts
//
// PATH is either a full nginx.conf (it has an `http { }` block) or a snippet:
// limit_req_zone / limit_conn_zone (and other http-level directives such as
// map, geo, upstream) mixed with limit_req, limit_req_status, limit_conn and
// location blocks. A snippet is placed in a complete generated config: zone
// directives at http level, everything else inside one server. A file whose
// top level holds `server { }` blocks (a conf.d file) is placed at http level.
// In every case `listen` is rewritten to 127.0.0.1:<free port>, and pid,
// error_log, access_log, lock_file, temp and cache paths are forced into a
// private temporary directory, so the user's nginx installation is never
// touched. Errors from `nginx -t` are translated back to the user's file and
// line (see ConfigError).
//
// # Where the 200 comes from
//
// A snippet location with no content handler, and the `location /` added to a
// snippet that has none, answer through proxy_pass to a tiny HTTP server that
// Start runs on 127.0.0.1:0 (or to Options.Upstream). It must not be
// `return 200`: `return` belongs to the rewrite module and finishes the
// request in the rewrite phase, before the preaccess phase where limit_req and
// limit_conn run, so such a location is never limited (verified with nginx
// 1.22: at rate=1r/s with no burst, three back-to-back requests to a `return
// 200` location all got 200 while the same requests to an `empty_gif` or
// static-file location got 200, 503, 503). proxy_pass, like empty_gif or the
// static module, produces the response in the content phase, after limit_req,
// and unlike those two it accepts every method (the static module answers 405
// to POST). The readiness probe path ReadyPath uses `return 204` on purpose: it
// is never limited, so probing does not spend the zone.
//
// # nginx limit_req, as nginx computes it
//
// Per key nginx keeps `excess` in thousandths of a request and the time of the
// last accepted request in milliseconds (ngx_current_msec, a cached clock
// updated once per event-loop iteration). For each request
//
//	excess = max(0, excess − rate·elapsed_ms/1000 + 1000)
//
// and the request is rejected (status 503 unless limit_req_status says
// otherwise) if excess > burst·1000; a rejected request leaves the state
// unchanged. A new key starts at 0, so after idling burst+1 requests pass.
// The rate is stored as an integer number of thousandths of a request per
// second, computed with integer division from the configured value: `rate=1r/m`
// becomes 1000/60 = 16, i.e. 0.016 r/s — one request every 62.5 s, not 60 s;
// `rate=7r/m` becomes 116 (0.116 r/s, not 0.11666…). An admitted request waits
// (excess − delay·1000)/rate seconds when positive: without `delay` or
// `nodelay` the k-th excess request waits k/r (shaping, a staircase of 1/r);
// `nodelay` never waits (policing: observably a token bucket of capacity
// burst+1); `delay=N` lets the first N excess requests through at once and
// queues the rest. With several limit_req on one location every zone is
// checked, a request is charged only if none rejects, and the largest of the
// delays applies. ParseZones exposes these numbers.
package nginx
