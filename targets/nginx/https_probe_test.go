//go:build unix

package nginx_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"github.com/ratecheck/ratecheck/internal/testenv"
	"math"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/nginx"
)

// selfSignedFiles writes a certificate for 127.0.0.1 that is its own CA,
// and its key, as PEM files.
func selfSignedFiles(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

const httpsProbeMaxTime = 8 * time.Second

// probeNginx starts conf on a fresh nginx (over TLS when certFile is set)
// and probes it as `ratecheck probe` does.
func probeNginx(t *testing.T, conf, certFile, keyFile string) probe.Inference {
	t.Helper()
	inst, err := nginx.Start(context.Background(), conf, nginx.Options{TLSCertFile: certFile, TLSKeyFile: keyFile, Keep: os.Getenv("KEEP") != ""})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := inst.Stop(); err != nil {
			t.Error(err)
		}
	}()
	req, err := attack.NewRequest("GET", inst.URL, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := probe.Run(context.Background(), req, probe.Options{MaxTime: httpsProbeMaxTime,
		Engine: attack.Options{TLS: attack.TLSOptions{CACertFile: certFile}}})
	if err != nil {
		t.Fatal(err)
	}
	if errs, first := failedOf(res.Observation.Results); errs > 0 {
		t.Fatalf("%s: %d requests failed: %s", inst.URL, errs, first)
	}
	return res.Inference
}

func failedOf(rs []results.Result) (n int, first string) {
	for _, r := range rs {
		if r.Error != "" {
			if n == 0 {
				first = r.Error
			}
			n++
		}
	}
	return n, first
}

// A probe over https against nginx with TLS reads the limiter exactly as
// over http: the same family, the same burst, and rates that agree within
// their stated errors (10 r/s is the configured truth). Bursts over TLS
// reach nginx at one instant, as over http, so shaping is not mistaken for
// added latency nor policing for shaping.
func TestProbeOverHTTPSMatchesHTTP(t *testing.T) {
	testenv.NeedNginx(t)
	certFile, keyFile := selfSignedFiles(t)
	for _, c := range []struct {
		conf, family string
		burst        int
	}{
		{"burst.conf", "leaky_shaping", 5},
		{"burst-nodelay.conf", "token_bucket", 6},
	} {
		t.Run(c.conf, func(t *testing.T) {
			conf := filepath.Join("..", "..", "testdata", "nginx", c.conf)
			plain := probeNginx(t, conf, "", "")
			tls := probeNginx(t, conf, certFile, keyFile)
			for _, inf := range []probe.Inference{plain, tls} {
				if inf.Family != c.family || inf.Burst != c.burst || math.Abs(inf.RatePerS-10) > inf.RateErr+0.5 {
					t.Fatalf("over http: %s; over https: %s — want %s, burst %d, 10/s", plain.Summary(), tls.Summary(), c.family, c.burst)
				}
			}
			if math.Abs(plain.RatePerS-tls.RatePerS) > plain.RateErr+tls.RateErr+0.5 {
				t.Fatalf("rates disagree: http %s, https %s", plain.Summary(), tls.Summary())
			}
			t.Logf("http: %s | https: %s", plain.Summary(), tls.Summary())
		})
	}
}
