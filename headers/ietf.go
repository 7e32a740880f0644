package headers

// The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers) changed
// shape three times; servers in the wild emit every generation (see
// headers.md). ParseIETF works out which one a response uses, reads it into
// one model (policies + current service limits) and reports where the
// response breaks that generation's rules.

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Draft generations reported by ParseIETF.
const (
	// RateLimit-Limit carrying quota policies ("10, 10;w=1"), -Remaining, -Reset.
	GenerationDraft01to03 = "draft-01..03"
	// RateLimit-Limit/-Remaining/-Reset plus RateLimit-Policy ("100;w=10").
	GenerationDraft04to06 = "draft-04..06"
	// RateLimit-Limit/-Remaining/-Reset alone, with no policy anywhere: both
	// older generations allow this, so the exact one cannot be told.
	GenerationDraft01to06 = "draft-01..06"
	// RateLimit as a Dictionary ("limit=100, remaining=50, reset=5").
	GenerationDraft07 = "draft-07"
	// Named policies: RateLimit-Policy `"p";q=100;w=60`, RateLimit `"p";r=50;t=30`.
	GenerationDraft08to10 = "draft-08..10"
)

// Quota units registered by draft-10 §3.1.2 (the default is "requests").
var knownQuotaUnits = map[string]bool{"requests": true, "content-bytes": true, "concurrent-requests": true}

// epochLikeReset flags a reset that looks like a Unix time: every generation
// defines reset as delay-seconds.
const epochLikeReset = 1_000_000_000

// Policy is one quota policy.
type Policy struct {
	// Name is the policy identifier (draft-08..10); "" for the unnamed
	// Integer policies of earlier drafts.
	Name string
	// Quota is q (draft-08..10) or the policy's Integer value (earlier).
	Quota    int64
	HasQuota bool
	// WindowSeconds is w.
	WindowSeconds int64
	HasWindow     bool
	// QuotaUnit is qu; "requests" when absent (draft-08..10 §3.1.2), "" for
	// earlier drafts, which had no units.
	QuotaUnit string
	// PartitionKey is pk (draft-08..10), nil when absent.
	PartitionKey []byte
}

// ServiceLimit is the current state of one limit: a RateLimit item
// (draft-08..10), the RateLimit dictionary (draft-07) or the
// RateLimit-Limit/-Remaining/-Reset trio (earlier drafts).
type ServiceLimit struct {
	// Policy names the policy this limit belongs to (draft-08..10 only).
	Policy string
	// Limit is the "expiring limit" of draft-07 and earlier; draft-08..10
	// moved it into the policy's q.
	Limit    int64
	HasLimit bool
	// Remaining is r (draft-08..10) or remaining.
	Remaining    int64
	HasRemaining bool
	// ResetSeconds is t (draft-08..10) or reset: seconds until more quota.
	ResetSeconds int64
	HasReset     bool
	// PartitionKey is pk (draft-08..10).
	PartitionKey []byte
}

// IETF is what the IETF RateLimit fields of a response said.
type IETF struct {
	// Present is set when any RateLimit, RateLimit-Policy, RateLimit-Limit,
	// RateLimit-Remaining or RateLimit-Reset field was sent.
	Present bool
	// Generation is one of the Generation* constants, "" when nothing usable
	// was sent.
	Generation string
	Policies   []Policy
	Current    []ServiceLimit
	// Findings are rule violations and inconsistencies in fields that did
	// parse (r > q, undeclared policy names, w = 0, missing q or r, joined
	// field lines, ...).
	Findings []string
}

// ParseIETF reads the IETF RateLimit fields from h. Several field lines of
// one field are combined with ", " before parsing, as RFC 9651 §4.2 requires
// (and noted as a finding). The error joins the fields that are not valid
// structured fields at all; such fields are skipped, as the drafts tell
// clients to ignore malformed fields.
func ParseIETF(h http.Header) (IETF, error) {
	p := &ietfParser{}
	rl, hasRL := p.field(h, "RateLimit")
	pol, hasPol := p.field(h, "RateLimit-Policy")
	lim, hasLim := p.field(h, "RateLimit-Limit")
	rem, hasRem := p.field(h, "RateLimit-Remaining")
	rst, hasRst := p.field(h, "RateLimit-Reset")
	hasTrio := hasLim || hasRem || hasRst
	p.out.Present = hasRL || hasPol || hasTrio
	if !p.out.Present {
		return p.out, nil
	}

	var polList List
	polOK := false
	if hasPol {
		var err error
		if polList, err = ParseList(pol); err != nil {
			p.fail("RateLimit-Policy", err)
		} else {
			polOK = true
		}
	}

	switch {
	case hasRL:
		if hasTrio {
			p.find("RateLimit-Limit/-Remaining/-Reset (drafts -01..-06) were sent alongside RateLimit (draft-07 and later) and were not read")
		}
		dict, derr := ParseDictionary(rl)
		if derr == nil && (hasKey(dict, "limit") || hasKey(dict, "remaining") || hasKey(dict, "reset")) {
			p.out.Generation = GenerationDraft07
			p.readDraft07(dict)
			break
		}
		list, lerr := ParseList(rl)
		if lerr == nil {
			p.out.Generation = GenerationDraft08to10
			p.readServiceLimits(list)
			break
		}
		p.fail("RateLimit", fmt.Errorf("neither a draft-07 Dictionary nor a draft-08..10 List: %w", lerr))
		switch { // fall back on the policy field's style
		case polOK && namedPolicies(polList):
			p.out.Generation = GenerationDraft08to10
		case polOK:
			p.out.Generation = GenerationDraft07
		}
	case hasTrio:
		limList, limErr := List(nil), error(nil)
		if hasLim {
			if limList, limErr = ParseList(lim); limErr != nil {
				p.fail("RateLimit-Limit", limErr)
			}
		}
		switch {
		case hasPol:
			p.out.Generation = GenerationDraft04to06
		case limitCarriesPolicies(limList):
			p.out.Generation = GenerationDraft01to03
		default:
			p.out.Generation = GenerationDraft01to06
		}
		p.readTrio(limList, hasLim && limErr == nil, rem, hasRem, rst, hasRst)
	case polOK && namedPolicies(polList):
		p.out.Generation = GenerationDraft08to10
	case polOK:
		p.out.Generation = GenerationDraft04to06
	}

	if polOK {
		p.readPolicies(polList)
		if p.out.Generation == GenerationDraft08to10 {
			p.checkAgainstPolicies()
		}
	}
	return p.out, errors.Join(p.errs...)
}

type ietfParser struct {
	out  IETF
	errs []error
}

func (p *ietfParser) find(format string, args ...any) {
	p.out.Findings = append(p.out.Findings, fmt.Sprintf(format, args...))
}

func (p *ietfParser) fail(field string, err error) {
	p.errs = append(p.errs, fmt.Errorf("%s: %w", field, err))
}

// field returns the combined value of all field lines of name (RFC 9651
// §4.2: joined with ", ").
func (p *ietfParser) field(h http.Header, name string) (string, bool) {
	lines := fieldLines(h, name)
	if len(lines) == 0 {
		return "", false
	}
	if len(lines) > 1 {
		p.find("%s was sent as %d field lines; they were combined with \", \" before parsing (RFC 9651 §4.2)", name, len(lines))
	}
	return strings.Join(lines, ", "), true
}

func hasKey(d Dictionary, k string) bool {
	_, ok := d.Get(k)
	return ok
}

// namedPolicies reports whether a RateLimit-Policy list uses draft-08..10
// named items rather than the Integer items of earlier drafts.
func namedPolicies(l List) bool {
	for _, m := range l {
		if m.Inner != nil {
			continue
		}
		switch m.Item.Value.(type) {
		case string, Token:
			return true
		}
	}
	return false
}

// limitCarriesPolicies reports whether RateLimit-Limit has the draft-01..03
// shape `expiring-limit [, 1#quota-policy]`.
func limitCarriesPolicies(l List) bool {
	if len(l) > 1 {
		return true
	}
	return len(l) == 1 && l[0].Inner == nil && len(l[0].Item.Params) > 0
}

// describe names a bare item's type for findings.
func describe(v any) string {
	switch v.(type) {
	case int64:
		return "an Integer"
	case Decimal:
		return "a Decimal"
	case string:
		return "a String"
	case Token:
		return "a Token"
	case ByteSequence:
		return "a Byte Sequence"
	case bool:
		return "a Boolean"
	case Date:
		return "a Date"
	case DisplayString:
		return "a Display String"
	}
	return fmt.Sprintf("%T", v)
}

// nonNegInt reads v as a non-negative Integer, recording a finding if it is
// not one. what names the value for the message.
func (p *ietfParser) nonNegInt(v any, what string) (int64, bool) {
	i, ok := v.(int64)
	if !ok {
		p.find("%s is %s; expected a non-negative Integer", what, describe(v))
		return 0, false
	}
	if i < 0 {
		p.find("%s is %d; it must not be negative", what, i)
		return i, true
	}
	return i, true
}

func (p *ietfParser) checkReset(v int64, what string) {
	if v >= epochLikeReset {
		p.find("%s %d looks like a Unix timestamp; it is a number of seconds (delay-seconds)", what, v)
	}
}

// memberItem returns a member's Item, recording a finding for Inner Lists,
// which no generation uses.
func (p *ietfParser) memberItem(m Member, what string) (Item, bool) {
	if m.Inner != nil {
		p.find("%s is an Inner List; expected an Item", what)
		return Item{}, false
	}
	return m.Item, true
}

// readTrio reads the drafts -01..-06 fields RateLimit-Limit, -Remaining and
// -Reset into one ServiceLimit.
func (p *ietfParser) readTrio(limList List, limOK bool, rem string, hasRem bool, rst string, hasRst bool) {
	var sl ServiceLimit
	if limOK {
		if len(limList) == 0 {
			p.find("RateLimit-Limit is empty")
		}
		for i, m := range limList {
			what := fmt.Sprintf("RateLimit-Limit member %d", i+1)
			it, ok := p.memberItem(m, what)
			if !ok {
				continue
			}
			if i == 0 {
				// The expiring limit (draft-01 §3.1).
				sl.Limit, sl.HasLimit = p.nonNegInt(it.Value, "RateLimit-Limit")
				if _, hasW := it.Params.Get("w"); !hasW {
					continue
				}
			}
			p.readIntegerPolicy(it, what)
		}
		if p.out.Generation == GenerationDraft04to06 && len(limList) > 1 {
			p.find("RateLimit-Limit carries quota policies; from draft-04 on they belong in RateLimit-Policy")
		}
	}
	if hasRem {
		if it, err := ParseItem(rem); err != nil {
			p.fail("RateLimit-Remaining", err)
		} else {
			sl.Remaining, sl.HasRemaining = p.nonNegInt(it.Value, "RateLimit-Remaining")
		}
	}
	if hasRst {
		if it, err := ParseItem(rst); err != nil {
			p.fail("RateLimit-Reset", err)
		} else if sl.ResetSeconds, sl.HasReset = p.nonNegInt(it.Value, "RateLimit-Reset"); sl.HasReset {
			p.checkReset(sl.ResetSeconds, "RateLimit-Reset")
		}
	}
	switch {
	case len(limList) == 0 && !limOK:
		p.find("RateLimit-Remaining/-Reset without a usable RateLimit-Limit")
	case !hasRst:
		p.find("RateLimit-Limit without RateLimit-Reset, which must accompany it")
	}
	if sl.HasLimit && sl.HasRemaining && sl.Remaining > sl.Limit {
		p.find("RateLimit-Remaining %d exceeds RateLimit-Limit %d", sl.Remaining, sl.Limit)
	}
	if sl.HasLimit || sl.HasRemaining || sl.HasReset {
		p.out.Current = append(p.out.Current, sl)
	}
}

// readDraft07 reads `RateLimit: limit=100, remaining=50, reset=5`
// (draft-07 §3.1: limit and reset REQUIRED, remaining OPTIONAL, parameters
// ignored).
func (p *ietfParser) readDraft07(d Dictionary) {
	var sl ServiceLimit
	// get returns the key's bare item; present is false when the key is
	// missing, usable false when it is an Inner List.
	get := func(key string) (v any, present, usable bool) {
		m, ok := d.Get(key)
		if !ok {
			return nil, false, false
		}
		it, ok := p.memberItem(m, "RateLimit "+key)
		return it.Value, true, ok
	}
	if v, present, usable := get("limit"); !present {
		p.find("RateLimit has no limit key, which draft-07 requires")
	} else if usable {
		sl.Limit, sl.HasLimit = p.nonNegInt(v, "RateLimit limit")
	}
	if v, _, usable := get("remaining"); usable {
		sl.Remaining, sl.HasRemaining = p.nonNegInt(v, "RateLimit remaining")
	}
	if v, present, usable := get("reset"); !present {
		p.find("RateLimit has no reset key, which draft-07 requires")
	} else if usable {
		if sl.ResetSeconds, sl.HasReset = p.nonNegInt(v, "RateLimit reset"); sl.HasReset {
			p.checkReset(sl.ResetSeconds, "RateLimit reset")
		}
	}
	if sl.HasLimit && sl.HasRemaining && sl.Remaining > sl.Limit {
		p.find("RateLimit remaining %d exceeds limit %d", sl.Remaining, sl.Limit)
	}
	p.out.Current = append(p.out.Current, sl)
}

// readServiceLimits reads the draft-08..10 RateLimit List of service limit
// items: a policy name with r (REQUIRED), t and pk (draft-10 §4.1).
func (p *ietfParser) readServiceLimits(l List) {
	if len(l) == 0 {
		p.find("RateLimit is an empty List")
	}
	for i, m := range l {
		it, ok := p.memberItem(m, fmt.Sprintf("RateLimit member %d", i+1))
		if !ok {
			continue
		}
		var sl ServiceLimit
		switch v := it.Value.(type) {
		case string:
			sl.Policy = v
		case Token:
			sl.Policy = string(v)
		default:
			p.find("RateLimit member %d is %s; it should name a policy with a String", i+1, describe(v))
		}
		what := fmt.Sprintf("RateLimit %q", sl.Policy)
		if v, ok := it.Params.Get("r"); ok {
			sl.Remaining, sl.HasRemaining = p.nonNegInt(v, what+" r")
		} else {
			p.find("%s has no r parameter, which is required (draft-10 §4.1)", what)
		}
		if v, ok := it.Params.Get("t"); ok {
			if sl.ResetSeconds, sl.HasReset = p.nonNegInt(v, what+" t"); sl.HasReset {
				p.checkReset(sl.ResetSeconds, what+" t")
			}
		}
		sl.PartitionKey = p.partitionKey(it.Params, what)
		p.out.Current = append(p.out.Current, sl)
	}
}

func (p *ietfParser) partitionKey(ps Params, what string) []byte {
	v, ok := ps.Get("pk")
	if !ok {
		return nil
	}
	b, ok := v.(ByteSequence)
	if !ok {
		p.find("%s pk is %s; it must be a Byte Sequence", what, describe(v))
		return nil
	}
	return []byte(b)
}

// readPolicies reads RateLimit-Policy, whose items are Integers up to
// draft-07 and named Strings from draft-08 on.
func (p *ietfParser) readPolicies(l List) {
	named := p.out.Generation == GenerationDraft08to10
	if len(l) == 0 {
		p.find("RateLimit-Policy is an empty List; it must be non-empty")
	}
	for i, m := range l {
		what := fmt.Sprintf("RateLimit-Policy member %d", i+1)
		it, ok := p.memberItem(m, what)
		if !ok {
			continue
		}
		switch v := it.Value.(type) {
		case int64:
			if named {
				p.find("%s is an unnamed Integer policy (draft-07 and earlier) in a draft-08..10 field", what)
			}
			p.readIntegerPolicy(it, what)
		case string:
			if !named {
				p.find("%s is a named policy (draft-08..10) alongside %s fields", what, p.out.Generation)
			}
			p.readNamedPolicy(v, it.Params)
		case Token:
			p.find("%s names its policy with a Token; draft-08..10 require a String (draft-10 §3)", what)
			p.readNamedPolicy(string(v), it.Params)
		default:
			p.find("%s is %s; expected a String policy name or an Integer quota", what, describe(v))
		}
	}
	if named {
		seen := map[string]bool{}
		for _, pol := range p.out.Policies {
			if pol.Name == "" {
				continue
			}
			if seen[pol.Name] {
				p.find("RateLimit-Policy declares %q more than once", pol.Name)
			}
			seen[pol.Name] = true
		}
	}
}

// readIntegerPolicy reads a quota policy of drafts -01..-07: an Integer quota
// with a REQUIRED w parameter (draft-01 §2.3, draft-07 §2.1).
func (p *ietfParser) readIntegerPolicy(it Item, what string) {
	var pol Policy
	pol.Quota, pol.HasQuota = p.nonNegInt(it.Value, what+" quota")
	if v, ok := it.Params.Get("w"); ok {
		pol.WindowSeconds, pol.HasWindow = p.window(v, what)
	} else {
		p.find("%s has no w parameter, which is required for an Integer quota policy", what)
	}
	p.out.Policies = append(p.out.Policies, pol)
}

// readNamedPolicy reads a draft-08..10 quota policy item (draft-10 §3.1).
func (p *ietfParser) readNamedPolicy(name string, ps Params) {
	pol := Policy{Name: name, QuotaUnit: "requests"}
	what := fmt.Sprintf("RateLimit-Policy %q", name)
	if v, ok := ps.Get("q"); ok {
		pol.Quota, pol.HasQuota = p.nonNegInt(v, what+" q")
	} else {
		p.find("%s has no q parameter, which is required (draft-10 §3.1)", what)
	}
	if v, ok := ps.Get("w"); ok {
		pol.WindowSeconds, pol.HasWindow = p.window(v, what)
	}
	if v, ok := ps.Get("qu"); ok {
		switch s := v.(type) {
		case string:
			pol.QuotaUnit = s
			if !knownQuotaUnits[s] {
				p.find("%s qu %q is not a registered quota unit (requests, content-bytes, concurrent-requests)", what, s)
			}
		default:
			p.find("%s qu is %s; it must be a String (draft-10 §3.1.2)", what, describe(v))
		}
	}
	pol.PartitionKey = p.partitionKey(ps, what)
	p.out.Policies = append(p.out.Policies, pol)
}

// window reads w: a non-negative, non-zero Integer number of seconds
// (draft-10 §3.1.3).
func (p *ietfParser) window(v any, what string) (int64, bool) {
	w, ok := p.nonNegInt(v, what+" w")
	if ok && w == 0 {
		p.find("%s has w=0; the window must be a non-zero number of seconds (draft-10 §3.1.3)", what)
	}
	return w, ok
}

// checkAgainstPolicies cross-checks draft-08..10 service limits against the
// declared policies: every RateLimit item should name a declared policy, and
// its remaining quota cannot exceed the policy's quota. A response without
// RateLimit-Policy declares nothing, which is allowed (draft-10 §2), so the
// check only runs when RateLimit-Policy was sent.
func (p *ietfParser) checkAgainstPolicies() {
	byName := map[string]Policy{}
	for _, pol := range p.out.Policies {
		if pol.Name != "" {
			if _, dup := byName[pol.Name]; !dup {
				byName[pol.Name] = pol
			}
		}
	}
	for _, sl := range p.out.Current {
		if sl.Policy == "" {
			continue // already reported as not naming a policy
		}
		pol, ok := byName[sl.Policy]
		if !ok {
			p.find("RateLimit names policy %q, which RateLimit-Policy does not declare", sl.Policy)
			continue
		}
		if sl.HasRemaining && pol.HasQuota && sl.Remaining > pol.Quota {
			p.find("RateLimit %q r=%d exceeds its policy's q=%d", sl.Policy, sl.Remaining, pol.Quota)
		}
	}
}
