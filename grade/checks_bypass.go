package grade

import (
	"fmt"
	"strings"

	"github.com/ratecheck/ratecheck/probe/bypass"
)

// bypassHints say how to close each kind of way around a limit.
var bypassHints = map[bypass.Kind]string{
	bypass.Address:  "key the limit on the connection's address, or read a client-address header only from your own proxies, which overwrite it",
	bypass.Path:     "key the limit on the route the router resolved (the normalized path), not the raw request target, and leave the query out of the key",
	bypass.Method:   "apply the limit to every method the route answers (HEAD with GET)",
	bypass.Protocol: "key the limit on the client, not its connection, and apply it on every protocol the front serves",
	bypass.Identity: "key the limit on what the client cannot choose (its address, its authenticated identity), not its User-Agent or a cookie it can drop",
}

// checkBypass is the check of one kind of bypass trial (probe/bypass):
// fails when a trial got around the exhausted key, passes when every trial
// of the kind was rejected like the key or not served, and skips when one
// could not be told apart from the limit recovering — an unclear trial may
// be a way around, so it never passes.
func checkBypass(kind bypass.Kind) func(*view) verdict {
	return func(v *view) verdict {
		s := v.inf.Bypass
		if s == nil {
			return skip("the bypass suite did not run (--no-bypass, or the probe never exhausted its key)")
		}
		rs := s.OfKind(kind)
		if len(rs) == 0 {
			return skip("no %s trial ran", kind)
		}
		var held, unclear []string
		for _, r := range rs {
			switch r.Outcome {
			case bypass.Found:
				return verdict{outcome: Fail,
					actual: fmt.Sprintf("%s (%s): %s; sent %s", r.Trial, r.What, r.Why, strings.Join(r.Sent, " | ")),
					hint:   bypassHints[kind], seqs: limitSeqs(r.Seqs),
					capWhy: "anyone can get around this limit: " + r.What}
			case bypass.Unclear:
				unclear = append(unclear, fmt.Sprintf("%s (%s)", r.Trial, r.Why))
			default:
				held = append(held, r.Trial)
			}
		}
		if len(unclear) > 0 {
			return skip("could not be told apart from the limit recovering: %s", strings.Join(unclear, "; "))
		}
		return verdict{outcome: Pass, actual: fmt.Sprintf("rejected like the exhausted key, or not served: %s", strings.Join(held, ", ")),
			seqs: limitSeqs(rs[0].Seqs)}
	}
}

// limitSeqs is at most maxSeqs of seqs.
func limitSeqs(seqs []int) []int { return seqs[:min(len(seqs), maxSeqs)] }
