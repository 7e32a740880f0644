package corpus

import (
	"context"
	"path/filepath"
	"time"

	"github.com/ratecheck/ratecheck/targets/haproxy"
)

// startHAProxy runs one of the corpus's HAProxy snippets (haproxy/*.cfg)
// through ratecheck's own haproxy: target runner. HAProxy runs a thread per
// CPU and its rules are not one transaction: in a burst, a request counted
// on another thread between this one's count and its check can make one too
// many or too few pass (at most threads − 1), inside the ±10% bar on 20.
func startHAProxy(cfg string) func(ctx context.Context) (string, func() error, error) {
	return func(ctx context.Context) (string, func() error, error) {
		inst, err := haproxy.Start(ctx, filepath.Join("haproxy", cfg), haproxy.Options{})
		if err != nil {
			return "", nil, err
		}
		return inst.URL, inst.Stop, nil
	}
}

// HAProxy 2.6, src/freq_ctr.c (update_freq_ctr_period_slow, freq_ctr_total)
// and src/stick_table.c: http_req_rate(4s) is a freq_ctr of period 4 s read
// as curr + prev·(P − elapsed)/P, its grid anchored at the entry's first
// request and re-anchored after two idle periods; http-request track-sc0
// increments it when the request is tracked, before the deny — denied
// attempts count, so a client that keeps sending stays blocked. deny_status
// 429, no rate-limit headers.
func haproxyReqRate() Entry {
	return Entry{
		Name: "haproxy http_req_rate", Source: "haproxy (Debian package)",
		Truth:   Truth{Family: "sliding_counter", Limit: 20, Window: 4 * time.Second, Align: "first", CountsRejected: true},
		MaxTime: budget(4 * time.Second),
		Start:   startHAProxy("req-rate.cfg"),
	}
}

// The same freq_ctr as gpc0_rate(4s), incremented by sc-inc-gpc0 only for
// requests that passed the deny: a sliding counter of admitted requests,
// grid anchored at the entry's first request.
func haproxyGPCRate() Entry {
	return Entry{
		Name: "haproxy gpc0_rate", Source: "haproxy (Debian package)",
		Truth:   Truth{Family: "sliding_counter", Limit: 20, Window: 4 * time.Second, Align: "first"},
		MaxTime: budget(4 * time.Second),
		Start:   startHAProxy("gpc-rate.cfg"),
	}
}

// A stick-table entry per client and 2-second slot of the epoch
// (sample fetch date, converter div), its gpc0 counting admitted requests:
// a fixed window aligned to the wall clock.
func haproxyGPCFixed() Entry {
	return Entry{
		Name: "haproxy gpc fixed", Source: "haproxy (Debian package)",
		Truth:   Truth{Family: "fixed_window", Limit: 20, Window: 2 * time.Second, Align: "wall"},
		MaxTime: budget(2 * time.Second),
		Start:   startHAProxy("gpc-fixed.cfg"),
	}
}
