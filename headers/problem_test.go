package headers

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func intp(i int) *int { return &i }

func TestParseProblemValid(t *testing.T) {
	tests := []struct {
		name    string
		ct      string
		body    string
		want    Problem
		finding string
	}{
		{
			name: "draft-10 quota-exceeded",
			ct:   "application/problem+json",
			body: `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","violated-policies":["daily","bandwidth"]}`,
			want: Problem{
				Type: ProblemQuotaExceeded, TypePresent: true,
				Title:            "Request cannot be satisfied as assigned quota has been exceeded",
				Extensions:       map[string]any{"violated-policies": []any{"daily", "bandwidth"}},
				ViolatedPolicies: []string{"daily", "bandwidth"},
			},
		},
		{
			name: "RFC 9457 §3 example with extensions",
			ct:   "application/problem+json; charset=utf-8",
			body: `{"type":"https://example.com/probs/out-of-credit","title":"You do not have enough credit.","detail":"Your current balance is 30, but that costs 50.","instance":"/account/12345/msgs/abc","balance":30,"accounts":["/account/12345","/account/67890"]}`,
			want: Problem{
				Type: "https://example.com/probs/out-of-credit", TypePresent: true,
				Title:    "You do not have enough credit.",
				Detail:   "Your current balance is 30, but that costs 50.",
				Instance: "/account/12345/msgs/abc",
				Extensions: map[string]any{
					"balance":  json.Number("30"),
					"accounts": []any{"/account/12345", "/account/67890"},
				},
			},
		},
		{
			name: "type defaults to about:blank",
			ct:   "Application/Problem+JSON",
			body: ` {"title":"Too Many Requests","status":429} `,
			want: Problem{Type: AboutBlank, Title: "Too Many Requests", Status: intp(429)},
		},
		{
			name:    "status as a string is ignored",
			ct:      "application/problem+json",
			body:    `{"status":"429","title":"slow down"}`,
			want:    Problem{Type: AboutBlank, Title: "slow down"},
			finding: `"status" is a JSON string, not a number; ignored`,
		},
		{
			name:    "non-integer status is ignored",
			ct:      "application/problem+json",
			body:    `{"status":429.5}`,
			want:    Problem{Type: AboutBlank},
			finding: "not an integer status code",
		},
		{
			name:    "huge status is ignored",
			ct:      "application/problem+json",
			body:    `{"status":1e400}`,
			want:    Problem{Type: AboutBlank},
			finding: "not an integer status code",
		},
		{
			name:    "status outside 100-599 is kept but noted",
			ct:      "application/problem+json",
			body:    `{"status":42}`,
			want:    Problem{Type: AboutBlank, Status: intp(42)},
			finding: "is not an HTTP status code",
		},
		{
			name:    "type as a number is ignored",
			ct:      "application/problem+json",
			body:    `{"type":7,"title":"x"}`,
			want:    Problem{Type: AboutBlank, Title: "x"},
			finding: `"type" is a JSON number, not a string; ignored`,
		},
		{
			name:    "null members are ignored",
			ct:      "application/problem+json",
			body:    `{"title":null,"detail":null,"instance":null,"status":null}`,
			want:    Problem{Type: AboutBlank},
			finding: `"status" is a JSON null`,
		},
		{
			name:    "type that is not a URI reference",
			ct:      "application/problem+json",
			body:    `{"type":"http://a b/%zz"}`,
			want:    Problem{Type: "http://a b/%zz", TypePresent: true},
			finding: "is not a URI reference",
		},
		{
			name:    "empty type is kept but noted",
			ct:      "application/problem+json",
			body:    `{"type":""}`,
			want:    Problem{Type: "", TypePresent: true},
			finding: `"type" is an empty string`,
		},
		{
			name:    "violated-policies not an array",
			ct:      "application/problem+json",
			body:    `{"violated-policies":"daily"}`,
			want:    Problem{Type: AboutBlank, Extensions: map[string]any{"violated-policies": "daily"}},
			finding: "defines an array of strings",
		},
		{
			name: "violated-policies with a non-string",
			ct:   "application/problem+json",
			body: `{"violated-policies":["daily",3]}`,
			want: Problem{Type: AboutBlank, Extensions: map[string]any{"violated-policies": []any{"daily", json.Number("3")}},
				ViolatedPolicies: []string{"daily"}},
			finding: `"violated-policies"[1] is a JSON number`,
		},
		{
			name:    "duplicate member",
			ct:      "application/problem+json",
			body:    `{"status":429,"status":503}`,
			want:    Problem{Type: AboutBlank, Status: intp(503)},
			finding: `member "status" appears more than once`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProblem(tt.ct, []byte(tt.body))
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			findings := got.Findings
			got.Findings = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tt.want)
			}
			if tt.finding == "" && len(findings) > 0 {
				t.Fatalf("unexpected findings %q", findings)
			}
			if tt.finding != "" && !containsSub(findings, tt.finding) {
				t.Fatalf("findings %q lack %q", findings, tt.finding)
			}
		})
	}
}

func TestParseProblemInvalid(t *testing.T) {
	tests := []struct {
		name, ct, body, want string
		parsedTitle          string // the body is still read when only the media type is wrong
	}{
		{"plain JSON media type", "application/json", `{"title":"x"}`, `problem details use application/problem+json`, "x"},
		{"XML problem details", "application/problem+xml", `<problem/>`, "XML format", ""},
		{"no content type", "", `{"title":"x"}`, "no Content-Type", "x"},
		{"malformed content type", "application/problem+json; charset", `{"title":"x"}`, "Content-Type", "x"},
		{"empty body", "application/problem+json", "", "empty body", ""},
		{"whitespace body", "application/problem+json", " \n", "empty body", ""},
		{"array body", "application/problem+json", `[{"title":"x"}]`, "body is a JSON array", ""},
		{"string body", "application/problem+json", `"rate limited"`, "body is a JSON string", ""},
		{"null body", "application/problem+json", `null`, "body is a JSON null", ""},
		{"not JSON", "application/problem+json", `Too Many Requests`, "not JSON", ""},
		{"truncated JSON", "application/problem+json", `{"title":"x"`, "not JSON", ""},
		{"two objects", "application/problem+json", `{"title":"x"}{"title":"y"}`, "data after the JSON object", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProblem(tt.ct, []byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			if got.Title != tt.parsedTitle || got.Type != AboutBlank {
				t.Fatalf("got %+v", got)
			}
		})
	}
}
