package bypass

import "fmt"

// clientAddressHeaders are the headers proxies and CDNs set to the client's
// address, each trusted by some library or gateway by default (the list
// HackTricks and the OWASP testing guide try by hand). X-Forwarded-For has
// trials of its own; its single entry, X-Real-IP and Forwarded are the
// probe's scope trials (scope.spoofable), not repeated here. The CDNs'
// headers come first: the commonest in front of an origin.
var clientAddressHeaders = []string{
	"True-Client-IP", "CF-Connecting-IP", "X-Client-IP", "X-Originating-IP",
	"X-Remote-IP", "X-Remote-Addr", "Client-IP", "X-Cluster-Client-IP",
}

// addressTrials forge a new client address on every request. Which entry
// of X-Forwarded-For a limit reads is not told apart: the list's entries
// are all fresh, first and last alike.
func addressTrials() []Trial {
	header := func(name, what string, value func(n int) string) Trial {
		return Trial{Name: headerTrialName(name), Kind: Address, What: what,
			Request: func(n int) Variant { return Variant{Set: []string{name + ": " + value(n)}} }}
	}
	var out []Trial
	for i, name := range clientAddressHeaders {
		out = append(out, header(name, name+" with a new address each request",
			func(n int) string { return forgedAddress(i, n) }))
	}
	return append(out,
		Trial{Name: "x-forwarded-for-list", Kind: Address, What: "X-Forwarded-For listing several new addresses",
			Request: func(n int) Variant {
				return Variant{Set: []string{fmt.Sprintf("X-Forwarded-For: %s, %s, %s", forgedAddress(0, n), forgedAddress(1, n), forgedAddress(2, n))}}
			}},
		Trial{Name: "x-forwarded-for-doubled", Kind: Address, What: "two X-Forwarded-For lines, each a new address",
			Request: func(n int) Variant {
				return Variant{Set: []string{"X-Forwarded-For: " + forgedAddress(1, n), "X-Forwarded-For: " + forgedAddress(2, n)}}
			}})
}

// headerTrialName is a header's trial name: the header in lower case.
func headerTrialName(header string) string {
	b := []byte(header)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
