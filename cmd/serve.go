package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratecheck/ratecheck/targets/limiter"
	"github.com/ratecheck/ratecheck/targets/refserver"
)

func newServeCmd() *cobra.Command {
	var addr string
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve a reference rate limiter over HTTP on loopback",
		Long: `serve exposes one of ratecheck's reference limiters over HTTP, answering
every path. Admitted requests get 200; rejected ones get 429 (or 503) with a
problem+json body, Retry-After and the chosen quota headers. It prints the
address it listens on and stops on SIGINT/SIGTERM. --fault breaks one rule
of that contract on purpose (a lying Remaining, a short Retry-After, ...)
so a grader can be seen failing; see docs/grading.md.

Algorithms: ` + fmt.Sprint(limiter.Families()),
		Example: `  ratecheck serve --algo token_bucket --rate 10/s --burst 20 --addr 127.0.0.1:8080
  ratecheck serve --algo token_bucket --rate 10/s --burst 20 --refill 1s
  ratecheck serve --algo fixed_window --limit 5 --window 2s --addr 127.0.0.1:0
  ratecheck serve --algo leaky_shaping --rate 10/s --burst 5 --status 503 --headers none
  ratecheck serve --algo concurrency --max-inflight 4 --latency 50ms
  ratecheck serve --algo sliding_counter --limit 30 --window 10s --count-rejected on
  ratecheck serve --algo leaky_shaping --rate 20/s --burst unbounded
  ratecheck serve --algo tiers --mode all --t1 token_bucket:rate=10/s,burst=5 --t2 fixed_window:limit=30,window=1m
  ratecheck serve --algo tiers --mode either --t1 token_bucket:rate=4/s,burst=4 --t2 fixed_window:limit=8,window=10s
  ratecheck serve --algo token_bucket --rate 10/s --burst 20 --fault lie-remaining,short-retry-after`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			// Flags and builtin: query keys share one parser.
			var settings [][2]string
			c.Flags().Visit(func(f *pflag.Flag) {
				if f.Name != "addr" {
					settings = append(settings, [2]string{f.Name, f.Value.String()})
				}
			})
			opt, err := refserver.Configure(settings)
			if err != nil {
				return usageErr("%v", err)
			}
			srv, err := refserver.Start(addr, opt)
			if err != nil {
				return usageErr("%v", err)
			}
			// Ctrl-C is handled before the server says it listens: a
			// script that waits for that line and interrupts at once
			// (CI did) otherwise killed it unstopped, exit -1.
			ctx, stop := interruptible(c)
			defer stop()
			fmt.Fprintf(c.OutOrStdout(), "ratecheck serve: %s listening on %s\n", opt.Limiter.Algo, srv.URL)
			<-ctx.Done()
			fmt.Fprintln(c.OutOrStdout(), "ratecheck serve: stopping")
			return srv.Close()
		},
	}
	f := c.Flags()
	d := refserver.DefaultOptions()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (127.0.0.1:0 picks a free port)")
	f.String("algo", d.Limiter.Algo, "algorithm: none, fixed_window, sliding_log, sliding_counter, token_bucket, leaky_shaping, concurrency, tiers")
	f.String("rate", "10/s", "refill or drain rate for token_bucket and leaky_shaping (10/s, 600/m, 5/500ms)")
	f.String("burst", "20", "bucket capacity (token_bucket) or queue length (leaky_shaping, as nginx burst=; unbounded: a pacer that never rejects)")
	f.String("refill", "0s", "token_bucket: add rate × this many tokens at once every interval, at a phase fixed when the server starts (older Envoy fill_interval, bucket4j refillIntervally; 0s: continuous)")
	f.String("delay", "0", "leaky_shaping: first N excess requests pass undelayed (nginx delay=)")
	f.String("limit", "100", "requests per window for window algorithms")
	f.String("window", "1m", "window length for window algorithms")
	f.String("align", limiter.AlignWall, "fixed_window alignment: wall (epoch multiples), first (key's first request) or start (a grid anchored when the server started; sliding_counter: wall or start)")
	f.String("penalty", limiter.PenaltyNone, "fixed_window: restart makes every over-limit request restart the window")
	f.String("count-rejected", "off", "fixed_window, sliding_log, sliding_counter: on makes denied attempts consume quota too (HAProxy http_req_rate)")
	f.String("block", "0s", "after a rejection shut the key for this long (any family but none; 0s: no block)")
	f.String("max-inflight", "10", "concurrency cap")
	f.String("mode", "", "tiers: all (every tier must admit; charged only if none rejects, as two nginx zones) or either (the first tier admits, else the second, a burst pool)")
	f.String("t1", "", "tiers: the first tier, FAMILY:key=value,... e.g. token_bucket:rate=10/s,burst=5 (rate, burst, delay, limit, window, align)")
	f.String("t2", "", "tiers: the second tier, e.g. fixed_window:limit=30,window=1m")
	f.String("status", "429", "rejection status: 429 or 503")
	f.String("headers", refserver.HeadersBoth, "quota headers: none, x-ratelimit, ietf, both")
	f.String("retry-after", "on", "send Retry-After on rejections: on or off")
	f.String("scope", "global", "limit key: global, ip, connection or header:NAME")
	f.String("key", refserver.KeyPeer, "what the limit is keyed on, words joined by commas: with scope ip, the address is the TCP peer (peer), what X-Forwarded-For/X-Real-IP/Forwarded say (forwarded) or the CDN client-address headers (client-ip); path adds the raw request target, user-agent the User-Agent (all but peer: bypassable)")
	f.String("methods", "", "the methods the limit counts, joined by commas (empty: every method); others are answered uncounted")
	f.String("latency", "0s", "fixed backend delay for admitted requests")
	f.String("fault", "", "break the response contract on purpose, comma-separated: "+strings.Join(refserver.FaultNames(), ", "))
	return c
}
