// Package haproxy runs a real HAProxy from a user's configuration on a
// loopback port so that ratecheck can attack a `haproxy:PATH` target, and
// stops it again, whatever happens. It mirrors targets/nginx.
//
// # What Start accepts
//
// PATH is either a snippet or a configuration with sections.
//
// A snippet holds frontend lines only — no section keyword (global,
// defaults, frontend, backend, listen, …) — for example
//
//	stick-table type ip size 100k expire 30s store http_req_rate(10s)
//	http-request track-sc0 src
//	http-request deny deny_status 429 if { sc_http_req_rate(0) gt 10 }
//
// ratecheck wraps it in a generated config: a global section, defaults
// (mode http and timeouts), one frontend holding the snippet's lines after a
// bind to 127.0.0.1:<free port>, and a backend that forwards to a tiny HTTP
// server Start runs on loopback, which answers 200 "ok\n".
//
// A file with sections is run with its own rules, sandboxed: exactly the
// first frontend or listen section that has a bind is bound to 127.0.0.1:<free
// port> (its other bind lines, and the binds of every other proxy, are
// dropped); every `server` line of a backend or listen section is pointed at
// the internal loopback server, its parameters dropped, so no request leaves
// the machine and the user's application is not needed; the global lines that
// would touch the system (daemon, master-worker, pidfile, chroot, user,
// group, stats socket, log targets other than stdout/stderr) are dropped; a
// global and a defaults section are added when missing; peers, program and
// ring sections are refused (they open connections or run commands ratecheck
// cannot confine). What was rewritten is reported in Instance.Notes.
// `noreuseport` is always set, so a second HAProxy already on the port
// cannot share it with ours. Errors from `haproxy -c` are translated back to
// the user's file and line (see ConfigError).
//
// # Readiness
//
// The frontend's first rule is ratecheck's own
//
//	http-request return status 204 hdr x-ratecheck-ready NONCE if { path /__ratecheck_ready }
//
// HAProxy evaluates http-request rules in the order written, so this one
// answers before any of the user's track-sc or deny rules run: polling it
// never touches the stick table. (Rules at the connection level —
// `tcp-request connection track-sc0` — run before it and do see the poll's
// connection.) The nonce proves the answer came from this HAProxy.
//
// # HAProxy's counters, as HAProxy computes them
//
// A stick-table rate such as http_req_rate(P) is a freq_ctr of period P
// (src/freq_ctr.c, update_freq_ctr_period_slow and freq_ctr_total in
// HAProxy 2.6): two counters, curr and prev, and curr_tick, the start of the
// current period in ms. An update inside the period adds to curr; the first
// update at or after curr_tick+P moves curr to prev and advances curr_tick by
// P, and if that is still P or more behind (two idle periods), prev is zeroed
// and curr_tick restarts at now. A fresh entry has curr_tick 0, so its grid
// is anchored at the key's first request. The rate read is
// curr + prev·(P − elapsed)/P: a sliding counter. `http-request track-sc0`
// increments http_req_rate as soon as the request is tracked, before any
// deny rule, so denied requests count: a client that keeps sending above the
// limit stays blocked. A gpc0_rate that only `sc-inc-gpc0` increments, placed
// after the deny, counts admitted requests only. `deny_status` sets the
// rejection status (default 403); HAProxy adds no rate-limit headers and no
// Retry-After.
package haproxy
