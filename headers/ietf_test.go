package headers

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestParseIETFGenerations(t *testing.T) {
	tests := []struct {
		name     string
		h        http.Header
		gen      string
		policies []Policy
		current  []ServiceLimit
	}{
		{
			name: "draft-01..03 policies inside RateLimit-Limit",
			h:    hdr("RateLimit-Limit", "10, 10;w=1, 1000;w=3600", "RateLimit-Remaining", "5", "RateLimit-Reset", "1"),
			gen:  GenerationDraft01to03,
			policies: []Policy{
				{Quota: 10, HasQuota: true, WindowSeconds: 1, HasWindow: true},
				{Quota: 1000, HasQuota: true, WindowSeconds: 3600, HasWindow: true},
			},
			current: []ServiceLimit{{Limit: 10, HasLimit: true, Remaining: 5, HasRemaining: true, ResetSeconds: 1, HasReset: true}},
		},
		{
			name: "draft-01 quota-comment parameters",
			h:    hdr("RateLimit-Limit", `10, 10;w=1;burst=1000;policy="leaky bucket"`, "RateLimit-Reset", "7"),
			gen:  GenerationDraft01to03,
			policies: []Policy{
				{Quota: 10, HasQuota: true, WindowSeconds: 1, HasWindow: true},
			},
			current: []ServiceLimit{{Limit: 10, HasLimit: true, ResetSeconds: 7, HasReset: true}},
		},
		{
			name:    "Kong-style trio without a policy is ambiguous",
			h:       hdr("RateLimit-Limit", "10", "RateLimit-Remaining", "9", "RateLimit-Reset", "60"),
			gen:     GenerationDraft01to06,
			current: []ServiceLimit{{Limit: 10, HasLimit: true, Remaining: 9, HasRemaining: true, ResetSeconds: 60, HasReset: true}},
		},
		{
			name:     "express-rate-limit draft-6",
			h:        hdr("RateLimit-Policy", "5;w=60", "RateLimit-Limit", "5", "RateLimit-Remaining", "4", "RateLimit-Reset", "42"),
			gen:      GenerationDraft04to06,
			policies: []Policy{{Quota: 5, HasQuota: true, WindowSeconds: 60, HasWindow: true}},
			current:  []ServiceLimit{{Limit: 5, HasLimit: true, Remaining: 4, HasRemaining: true, ResetSeconds: 42, HasReset: true}},
		},
		{
			name:     "express-rate-limit draft-7",
			h:        hdr("RateLimit", "limit=5, remaining=0, reset=42", "RateLimit-Policy", "5;w=60"),
			gen:      GenerationDraft07,
			policies: []Policy{{Quota: 5, HasQuota: true, WindowSeconds: 60, HasWindow: true}},
			current:  []ServiceLimit{{Limit: 5, HasLimit: true, Remaining: 0, HasRemaining: true, ResetSeconds: 42, HasReset: true}},
		},
		{
			name: "draft-07 spec example with several policies",
			h:    hdr("RateLimit", "limit=10, remaining=1, reset=7", "RateLimit-Policy", "10;w=1, 50;w=60, 1000;w=3600, 5000;w=86400"),
			gen:  GenerationDraft07,
			policies: []Policy{
				{Quota: 10, HasQuota: true, WindowSeconds: 1, HasWindow: true},
				{Quota: 50, HasQuota: true, WindowSeconds: 60, HasWindow: true},
				{Quota: 1000, HasQuota: true, WindowSeconds: 3600, HasWindow: true},
				{Quota: 5000, HasQuota: true, WindowSeconds: 86400, HasWindow: true},
			},
			current: []ServiceLimit{{Limit: 10, HasLimit: true, Remaining: 1, HasRemaining: true, ResetSeconds: 7, HasReset: true}},
		},
		{
			name: "express-rate-limit draft-8 (SP after ';')",
			h:    hdr("RateLimit", `"5-in-1min"; r=0; t=42`, "RateLimit-Policy", `"5-in-1min"; q=5; w=60; pk=:ZGVmYXVsdA==:`),
			gen:  GenerationDraft08to10,
			policies: []Policy{
				{Name: "5-in-1min", Quota: 5, HasQuota: true, WindowSeconds: 60, HasWindow: true, QuotaUnit: "requests", PartitionKey: []byte("default")},
			},
			current: []ServiceLimit{{Policy: "5-in-1min", Remaining: 0, HasRemaining: true, ResetSeconds: 42, HasReset: true}},
		},
		{
			name: "Cloudflare-style -08 (lowercase field names)",
			h:    http.Header{"ratelimit": {`"default";r=1199;t=299`}, "ratelimit-policy": {`"default";q=1200;w=300`}},
			gen:  GenerationDraft08to10,
			policies: []Policy{
				{Name: "default", Quota: 1200, HasQuota: true, WindowSeconds: 300, HasWindow: true, QuotaUnit: "requests"},
			},
			current: []ServiceLimit{{Policy: "default", Remaining: 1199, HasRemaining: true, ResetSeconds: 299, HasReset: true}},
		},
		{
			name: "draft-10 two policies, no whitespace",
			h: hdr("RateLimit-Policy", `"permin";q=50;w=60,"perhr";q=1000;w=3600`,
				"RateLimit", `"permin";r=10;t=20, "perhr";r=900;t=3000`),
			gen: GenerationDraft08to10,
			policies: []Policy{
				{Name: "permin", Quota: 50, HasQuota: true, WindowSeconds: 60, HasWindow: true, QuotaUnit: "requests"},
				{Name: "perhr", Quota: 1000, HasQuota: true, WindowSeconds: 3600, HasWindow: true, QuotaUnit: "requests"},
			},
			current: []ServiceLimit{
				{Policy: "permin", Remaining: 10, HasRemaining: true, ResetSeconds: 20, HasReset: true},
				{Policy: "perhr", Remaining: 900, HasRemaining: true, ResetSeconds: 3000, HasReset: true},
			},
		},
		{
			name: "draft-10 quota unit and partition key",
			h:    hdr("RateLimit-Policy", `"peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:`),
			gen:  GenerationDraft08to10,
			policies: []Policy{
				{Name: "peruser", Quota: 65535, HasQuota: true, WindowSeconds: 10, HasWindow: true, QuotaUnit: "content-bytes",
					PartitionKey: []byte{0xb1, 0xd7, 0xe3, 0x2c, 0x95, 0x0e, 0x50}}, // non-zero pad bits in "UH==" are ignored (RFC 9651 §4.2.7),
			},
		},
		{
			name:    "draft-10 RateLimit without RateLimit-Policy",
			h:       hdr("RateLimit", `"default";r=999;pk=:dHJpYWwxMjEzMjM=:`),
			gen:     GenerationDraft08to10,
			current: []ServiceLimit{{Policy: "default", Remaining: 999, HasRemaining: true, PartitionKey: []byte("trial121323")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIETF(tt.h)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !got.Present || got.Generation != tt.gen {
				t.Fatalf("Present %v Generation %q, want %q", got.Present, got.Generation, tt.gen)
			}
			if !reflect.DeepEqual(got.Policies, tt.policies) {
				t.Errorf("Policies\n got %+v\nwant %+v", got.Policies, tt.policies)
			}
			if !reflect.DeepEqual(got.Current, tt.current) {
				t.Errorf("Current\n got %+v\nwant %+v", got.Current, tt.current)
			}
			if len(got.Findings) != 0 {
				t.Errorf("unexpected findings %q", got.Findings)
			}
		})
	}
}

func TestParseIETFAbsent(t *testing.T) {
	got, err := ParseIETF(hdr("X-RateLimit-Limit", "10", "Retry-After", "5"))
	if err != nil || got.Present || got.Generation != "" || got.Policies != nil || got.Current != nil || got.Findings != nil {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestParseIETFFindings(t *testing.T) {
	tests := []struct {
		name    string
		h       http.Header
		gen     string
		finding string
	}{
		{"r exceeds q", hdr("RateLimit-Policy", `"default";q=100;w=60`, "RateLimit", `"default";r=150;t=30`),
			GenerationDraft08to10, `RateLimit "default" r=150 exceeds its policy's q=100`},
		{"undeclared policy", hdr("RateLimit-Policy", `"burst";q=100;w=60,"daily";q=1000;w=86400`, "RateLimit", `"default";r=50;t=30`),
			GenerationDraft08to10, `names policy "default", which RateLimit-Policy does not declare`},
		{"w = 0", hdr("RateLimit-Policy", `"default";q=100;w=0`),
			GenerationDraft08to10, "w=0; the window must be a non-zero"},
		{"w = 0 in an Integer policy", hdr("RateLimit-Policy", `100;w=0`, "RateLimit", "limit=100, reset=1"),
			GenerationDraft07, "w=0"},
		{"missing q", hdr("RateLimit-Policy", `"default";w=60`),
			GenerationDraft08to10, "has no q parameter, which is required"},
		{"missing r", hdr("RateLimit-Policy", `"default";q=1`, "RateLimit", `"default";t=30`),
			GenerationDraft08to10, "has no r parameter, which is required"},
		{"multiple field lines are joined", hdr("RateLimit-Policy", `"a";q=1;w=1`, "RateLimit-Policy", `"b";q=2;w=2`, "RateLimit", `"a";r=1`, "RateLimit", `"b";r=2`),
			GenerationDraft08to10, `RateLimit-Policy was sent as 2 field lines; they were combined with ", "`},
		{"negative r", hdr("RateLimit", `"default";r=-1`),
			GenerationDraft08to10, "must not be negative"},
		{"decimal t", hdr("RateLimit", `"default";r=1;t=1.5`),
			GenerationDraft08to10, "is a Decimal; expected a non-negative Integer"},
		{"unregistered quota unit", hdr("RateLimit-Policy", `"peruser";q=65535;qu="bytes";w=10`),
			GenerationDraft08to10, `qu "bytes" is not a registered quota unit`},
		{"quota unit as a Token", hdr("RateLimit-Policy", `"p";q=1;qu=requests`),
			GenerationDraft08to10, "qu is a Token; it must be a String"},
		{"policy name as a Token", hdr("RateLimit-Policy", `default;q=100;w=60`),
			GenerationDraft08to10, "Token; draft-08..10 require a String"},
		{"pk not a Byte Sequence", hdr("RateLimit-Policy", `"p";q=1;pk="user"`),
			GenerationDraft08to10, "pk is a String; it must be a Byte Sequence"},
		{"duplicate policy names", hdr("RateLimit-Policy", `"p";q=1;w=1, "p";q=2;w=2`),
			GenerationDraft08to10, `declares "p" more than once`},
		{"Integer policy among named ones", hdr("RateLimit-Policy", `"p";q=1;w=1, 10;w=1`),
			GenerationDraft08to10, "unnamed Integer policy"},
		{"named policy with draft-07 RateLimit", hdr("RateLimit", "limit=5, remaining=0, reset=42", "RateLimit-Policy", `"p";q=5;w=60`),
			GenerationDraft07, "named policy (draft-08..10) alongside draft-07"},
		{"draft-07 without reset", hdr("RateLimit", "limit=5, remaining=0"),
			GenerationDraft07, "no reset key"},
		{"draft-07 without limit", hdr("RateLimit", "remaining=0, reset=1"),
			GenerationDraft07, "no limit key"},
		{"draft-07 remaining above limit", hdr("RateLimit", "limit=5, remaining=6, reset=1"),
			GenerationDraft07, "remaining 6 exceeds limit 5"},
		{"draft-07 inner list value", hdr("RateLimit", "limit=(5), reset=1"),
			GenerationDraft07, "RateLimit limit is an Inner List"},
		{"draft-07 epoch reset", hdr("RateLimit", "limit=5, remaining=1, reset=1700000000"),
			GenerationDraft07, "looks like a Unix timestamp"},
		{"trio epoch reset", hdr("RateLimit-Limit", "5", "RateLimit-Remaining", "1", "RateLimit-Reset", "1700000000"),
			GenerationDraft01to06, "looks like a Unix timestamp"},
		{"trio remaining above limit", hdr("RateLimit-Limit", "5", "RateLimit-Remaining", "6", "RateLimit-Reset", "1"),
			GenerationDraft01to06, "RateLimit-Remaining 6 exceeds RateLimit-Limit 5"},
		{"trio without reset", hdr("RateLimit-Limit", "5", "RateLimit-Remaining", "1"),
			GenerationDraft01to06, "without RateLimit-Reset"},
		{"trio without limit", hdr("RateLimit-Remaining", "1", "RateLimit-Reset", "1"),
			GenerationDraft01to06, "without a usable RateLimit-Limit"},
		{"Integer policy without w", hdr("RateLimit-Limit", "5", "RateLimit-Reset", "1", "RateLimit-Policy", "5"),
			GenerationDraft04to06, "has no w parameter"},
		{"draft-04..06 policies left in RateLimit-Limit", hdr("RateLimit-Limit", "5, 5;w=1", "RateLimit-Reset", "1", "RateLimit-Policy", "5;w=1"),
			GenerationDraft04to06, "from draft-04 on they belong in RateLimit-Policy"},
		{"mixed generations", hdr("RateLimit", `"p";r=1`, "RateLimit-Limit", "5", "RateLimit-Reset", "1"),
			GenerationDraft08to10, "were not read"},
		{"empty policy list", hdr("RateLimit-Policy", "", "RateLimit", `"p";r=1`),
			GenerationDraft08to10, "RateLimit-Policy is an empty List"},
		{"inner-list policy", hdr("RateLimit-Policy", `("a" "b");q=1, "c";q=1`),
			GenerationDraft08to10, "RateLimit-Policy member 1 is an Inner List"},
		{"RateLimit item that is not a name", hdr("RateLimit", `5;r=1`),
			GenerationDraft08to10, "should name a policy with a String"},
		{"RateLimit-Policy Boolean item", hdr("RateLimit-Policy", `"p";q=1, ?1;q=1`),
			GenerationDraft08to10, "is a Boolean; expected a String policy name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIETF(tt.h)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.Generation != tt.gen {
				t.Errorf("Generation %q, want %q", got.Generation, tt.gen)
			}
			if !containsSub(got.Findings, tt.finding) {
				t.Errorf("findings %q lack %q", got.Findings, tt.finding)
			}
		})
	}
}

// Multiple field lines must give the same result as one combined line
// (RFC 9651 §4.2), apart from the finding that notes the split.
func TestParseIETFJoinedLinesEquivalent(t *testing.T) {
	split, err1 := ParseIETF(hdr("RateLimit-Policy", `"a";q=1;w=1`, "RateLimit-Policy", `"b";q=2;w=2`))
	joined, err2 := ParseIETF(hdr("RateLimit-Policy", `"a";q=1;w=1, "b";q=2;w=2`))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !reflect.DeepEqual(split.Policies, joined.Policies) || len(split.Policies) != 2 {
		t.Fatalf("split %+v joined %+v", split.Policies, joined.Policies)
	}
}

func TestParseIETFErrors(t *testing.T) {
	tests := []struct {
		name, want, gen string
		h               http.Header
	}{
		{"RateLimit neither dictionary nor list", "RateLimit: neither a draft-07 Dictionary nor a draft-08..10 List", "",
			hdr("RateLimit", "limit=")},
		{"bad RateLimit falls back on the policy style", "RateLimit:", GenerationDraft08to10,
			hdr("RateLimit", `"p";r=`, "RateLimit-Policy", `"p";q=1`)},
		{"bad RateLimit with Integer policy", "RateLimit:", GenerationDraft07,
			hdr("RateLimit", `limit=5,`, "RateLimit-Policy", `5;w=1`)},
		{"unterminated policy name", "RateLimit-Policy:", "",
			hdr("RateLimit-Policy", `"default;q=1`)},
		{"remaining with a trailing semicolon", "RateLimit-Remaining:", GenerationDraft01to06,
			hdr("RateLimit-Limit", "5", "RateLimit-Remaining", "abc;", "RateLimit-Reset", "1")},
		{"remaining sent twice", "RateLimit-Remaining:", GenerationDraft01to06,
			hdr("RateLimit-Limit", "5", "RateLimit-Remaining", "4", "RateLimit-Remaining", "3", "RateLimit-Reset", "1")},
		{"reset not an item", "RateLimit-Reset:", GenerationDraft01to06,
			hdr("RateLimit-Limit", "5", "RateLimit-Reset", "1 2")},
		{"limit not a list", "RateLimit-Limit:", GenerationDraft01to06,
			hdr("RateLimit-Limit", "5,", "RateLimit-Reset", "1")},
		{"non-ASCII", "non-ASCII", GenerationDraft08to10,
			hdr("RateLimit", "\"caf\xc3\xa9\";r=1", "RateLimit-Policy", `"p";q=1`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseIETF(tt.h)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			if !got.Present || got.Generation != tt.gen {
				t.Fatalf("Present %v Generation %q, want %q", got.Present, got.Generation, tt.gen)
			}
		})
	}
}
