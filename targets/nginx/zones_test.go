package nginx

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseZonesTestdata(t *testing.T) {
	perip := func(limits ...Limit) Zone {
		return Zone{Name: "perip", Key: "$binary_remote_addr", Size: "10m", Rate: 10, RateMilli: 10000, RateSpec: "10r/s", Line: 0, Limits: limits}
	}
	tests := []struct {
		file string
		want []Zone
	}{
		{"burst.conf", []Zone{withLine(perip(Limit{Zone: "perip", Burst: 5, Status: 503, Line: 6}), 5)}},
		{"burst-nodelay.conf", []Zone{withLine(perip(Limit{Zone: "perip", Burst: 5, NoDelay: true, Status: 503, Line: 6}), 5)}},
		{"burst-delay.conf", []Zone{withLine(perip(Limit{Zone: "perip", Burst: 10, Delay: 4, Status: 503, Line: 6}), 5)}},
		{"status-429.conf", []Zone{withLine(perip(Limit{Zone: "perip", Burst: 5, NoDelay: true, Status: 429, Line: 5}), 3)}},
		{"rate-30rm.conf", []Zone{{Name: "slow", Key: "$binary_remote_addr", Size: "10m", Rate: 0.5, RateMilli: 500, RateSpec: "30r/m", Line: 4,
			Limits: []Limit{{Zone: "slow", Status: 503, Context: "location /", Line: 7}}}}},
		{"two-zones.conf", []Zone{
			withLine(perip(Limit{Zone: "perip", Burst: 5, Status: 503, Context: "location /", Line: 10}), 6),
			{Name: "everyone", Key: "global", Size: "1m", Rate: 5, RateMilli: 5000, RateSpec: "5r/s", Line: 7,
				Limits: []Limit{{Zone: "everyone", Burst: 20, Status: 503, Context: "location /", Line: 11}}},
		}},
		{"full.conf", []Zone{{Name: "api", Key: "$binary_remote_addr", Size: "10m", Rate: 5, RateMilli: 5000, RateSpec: "5r/s", Line: 15,
			Limits: []Limit{{Zone: "api", Burst: 2, NoDelay: true, Status: 429, Context: "http > server > location /", Line: 24}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(td(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseZones(string(b))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseZones(%s)\n got %+v\nwant %+v", tc.file, got, tc.want)
			}
		})
	}
}

func withLine(z Zone, line int) Zone { z.Line = line; return z }

// td is the path of a testdata/nginx file relative to this package.
func td(name string) string { return filepath.Join("..", "..", "testdata", "nginx", name) }

func TestParseZonesBadTestdata(t *testing.T) {
	for file, want := range map[string]string{
		"bad.conf":      `line 5: invalid parameter "nodely"`,
		"bad-zone.conf": `line 6: limit_req uses zone "nosuch", which no limit_req_zone defines`,
	} {
		b, err := os.ReadFile(td(file))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseZones(string(b))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseZones(%s) error %v, want prefix %q", file, err, want)
		}
	}
}

// nginx stores the rate as integer thousandths per second: 1r/m is 16/1000,
// one request per 62.5 s.
func TestParseZonesRateQuirk(t *testing.T) {
	for spec, milli := range map[string]int64{
		"1r/m": 16, "7r/m": 116, "30r/m": 500, "60r/m": 1000, "10r/s": 10000, "10": 10000, "1000r/m": 16666,
	} {
		zs, err := ParseZones("limit_req_zone $binary_remote_addr zone=z:1m rate=" + spec + ";")
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if zs[0].RateMilli != milli || zs[0].Rate != float64(milli)/1000 {
			t.Errorf("rate=%s: %d thousandths (%v/s), want %d", spec, zs[0].RateMilli, zs[0].Rate, milli)
		}
	}
	zs, _ := ParseZones("limit_req_zone $binary_remote_addr zone=z:1m rate=1r/m;")
	if zs[0].Rate != 0.016 || zs[0].Interval() != 62.5 {
		t.Errorf("1r/m: rate %v/s, interval %vs; want 0.016/s and 62.5s", zs[0].Rate, zs[0].Interval())
	}
}

// The errors nginx -t gives for the same parameters (nginx 1.22).
func TestParseZonesRejectsWhatNginxRejects(t *testing.T) {
	zone := "limit_req_zone $binary_remote_addr zone=z:1m rate=1r/s;\n"
	for text, want := range map[string]string{
		"limit_req_zone $binary_remote_addr zone=z:1m rate=0r/s;":   `invalid rate "rate=0r/s"`,
		"limit_req_zone $binary_remote_addr zone=z:1m rate=1.5r/s;": `invalid rate "rate=1.5r/s"`,
		"limit_req_zone $binary_remote_addr zone=z rate=1r/s;":      `invalid zone size "zone=z"`,
		zone + "limit_req zone=z burst=0;":                          `invalid burst value "burst=0"`,
		zone + "limit_req zone=z burst=5 delay=0;":                  `invalid delay value "delay=0"`,
		zone + "limit_req zone=z burst=5 nodelay delay=2;":          `invalid number of arguments`,
		zone + "limit_req burst=5;":                                 `must have "zone" parameter`,
		zone + zone:                                                 `defined twice`,
	} {
		_, err := ParseZones(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseZones(%q) error %v, want %q", text, err, want)
		}
	}
}

func TestParseZonesInheritance(t *testing.T) {
	zs, err := ParseZones(`
http {
    limit_req_zone $binary_remote_addr zone=z:1m rate=1r/s;
    limit_req_status 429;
    server {
        limit_req zone=z;
        location /a { limit_req zone=z burst=3; }
        location /b {
            limit_req_status 599;
            limit_req_dry_run on;
            limit_req zone=z nodelay;
        }
    }
}`)
	if err != nil {
		t.Fatal(err)
	}
	got := zs[0].Limits
	want := []Limit{
		{Zone: "z", Status: 429, Context: "http > server", Line: 6},
		{Zone: "z", Burst: 3, Status: 429, Context: "http > server > location /a", Line: 7},
		{Zone: "z", NoDelay: true, Status: 599, DryRun: true, Context: "http > server > location /b", Line: 11},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("limits\n got %+v\nwant %+v", got, want)
	}
}
