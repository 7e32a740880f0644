package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/targets/haproxy"
)

func hd(name string) string { return filepath.Join("..", "..", "testdata", "haproxy", name) }

func TestOpenHAProxy(t *testing.T) {
	testenv.Need(t, "haproxy")
	tg, err := OpenWith(context.Background(), "haproxy:"+hd("full.cfg"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind != KindHAProxy || !tg.Fresh() || !strings.HasPrefix(tg.URL, "http://127.0.0.1:") || tg.Dir == "" {
		t.Fatalf("target %+v", tg)
	}
	if n := strings.Join(tg.Notes, "\n"); !strings.Contains(n, "full.cfg:15: `bind *:8080` rewritten") {
		t.Errorf("notes %q do not mention the rewritten bind", n)
	}
	// gt 5 per 2 s: five pass, then 429.
	var got []int
	for range 6 {
		got = append(got, get(t, tg.URL))
	}
	if fmt.Sprint(got) != "[200 200 200 200 200 429]" {
		t.Errorf("statuses %v, want five 200 then 429", got)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tg.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory %s not removed", tg.Dir)
	}
	testenv.NoChildrenLeft(t)
}

// A config haproxy -c refuses is the user's to fix: a UsageError (exit 2)
// at the user's file and line, with nothing left running.
func TestOpenHAProxyBadConfigIsUsageError(t *testing.T) {
	testenv.Need(t, "haproxy")
	_, err := OpenWith(context.Background(), "haproxy:"+hd("bad.cfg"), Options{})
	var ue *UsageError
	var ce *haproxy.ConfigError
	if !errors.As(err, &ue) || !errors.As(err, &ce) {
		t.Fatalf("error %T %v, want a UsageError wrapping *haproxy.ConfigError", err, err)
	}
	if want := "testdata/haproxy/bad.cfg:4: haproxy rejected the configuration"; !strings.Contains(err.Error(), want) {
		t.Errorf("%q does not contain %q", err, want)
	}
	testenv.NoChildrenLeft(t)
}

func TestOpenHAProxyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for spec, want := range map[string]string{
		"haproxy:":                           "name the config file",
		"haproxy:" + filepath.Join(dir, "x"): "no such file",
		"haproxy:" + dir:                     "is a directory",
		"ftp://example.com/":                 "haproxy:PATH",
	} {
		_, err := OpenWith(context.Background(), spec, Options{})
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want a UsageError containing %q", spec, err, want)
		}
	}
	_, err := OpenWith(context.Background(), "haproxy:"+hd("req-rate.cfg"), Options{HAProxyBin: filepath.Join(dir, "no-haproxy")})
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--haproxy-bin") {
		t.Errorf("missing --haproxy-bin: %v, want a UsageError naming --haproxy-bin", err)
	}
}

// haproxy not installed is the environment (exit 3), with the install hint.
func TestOpenHAProxyNotInstalled(t *testing.T) {
	saved := startHAProxy
	defer func() { startHAProxy = saved }()
	startHAProxy = func(context.Context, string, haproxy.Options) (*haproxy.Instance, error) {
		return nil, haproxy.ErrNotFound
	}
	_, err := OpenWith(context.Background(), "haproxy:"+hd("req-rate.cfg"), Options{})
	var ue *UsageError
	if err == nil || errors.As(err, &ue) || !errors.Is(err, haproxy.ErrNotFound) {
		t.Fatalf("error %v, want haproxy.ErrNotFound and no UsageError", err)
	}
	if !strings.Contains(err.Error(), "apt-get install haproxy") {
		t.Errorf("error %q lost the install hint", err)
	}
}
