package nginx_test

import (
	"testing"

	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/probe/bypass"
)

// Real nginx limits with a defect a bypass trial finds, beside their
// honest twin: a zone keyed on $request_uri is got around by another
// spelling of the path, one keyed on a client header by a forged one, one
// that exempts HEAD by HEAD, one keyed on the User-Agent by another; the
// zone keyed on $binary_remote_addr by nothing. (A zone keyed on
// $connection is a limit per connection: the scope trials name it.)
func TestProbeFindsNginxBypasses(t *testing.T) {
	testenv.NeedNginx(t)
	t.Parallel()
	for _, c := range []struct {
		conf string
		kind bypass.Kind // the kind found; "" for none
	}{
		{"bypass-request-uri.conf", bypass.Path},
		{"bypass-client-header.conf", bypass.Address},
		{"bypass-head.conf", bypass.Method},
		{"bypass-user-agent.conf", bypass.Identity},
		{"status-429.conf", ""},
	} {
		t.Run(c.conf, func(t *testing.T) {
			t.Parallel() // each probe mostly waits on its own nginx
			s := probeConf(t, c.conf).Bypass
			if s == nil {
				t.Fatal("no bypass trial ran")
			}
			for _, r := range s.Found() {
				if r.Kind != c.kind {
					t.Errorf("%s (%s) found a way around that %s does not have", r.Trial, r.Kind, c.conf)
				}
			}
			if c.kind != "" && len(s.Found()) == 0 {
				t.Errorf("%s: no way around found; %s", c.conf, s.Summary())
			}
			for _, r := range s.Trials {
				t.Logf("%s", r.Line())
			}
		})
	}
}
