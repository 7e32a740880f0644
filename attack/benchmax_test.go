package attack

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// The max-throughput benchmarks drive the engine as `attack --rate max`
// does (Steady's closed loop: 50 connections, every result to the
// collector and to a results stream on disk) against a sink in a process
// of its own, so the CPU this process spends is the client's alone: the
// cpu-ns/req metric (user + system time of this process over the requests)
// is the figure to compare, far less sensitive to other load on the machine
// than ns/op, which is wall time on cores shared with the sink.

// benchSinkEnv makes the test binary serve as the benchmark's sink (see
// TestMain): "http" or "https". It prints its address and serves until its
// standard input closes.
const benchSinkEnv = "RATECHECK_BENCH_SINK"

func TestMain(m *testing.M) {
	if scheme := os.Getenv(benchSinkEnv); scheme != "" {
		benchSinkMain(scheme)
		return
	}
	os.Exit(m.Run())
}

// benchSinkMain is bench/sink's data port in miniature: HTTP/1.1 keep-alive,
// each request (no body) answered with a fixed 200 "ok" once its header's
// end has arrived.
func benchSinkMain(scheme string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var conf *tls.Config
	if scheme == "https" {
		if conf, err = benchSinkTLS(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Println(ln.Addr().String())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	response := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(0)
		}
		go func() {
			defer c.Close()
			_ = c.(*net.TCPConn).SetNoDelay(true)
			var rw io.ReadWriter = c
			if conf != nil {
				rw = tls.Server(c, conf)
			}
			buf := make([]byte, 32<<10)
			m := 0 // how much of "\r\n\r\n" the bytes so far end with
			for {
				n, err := rw.Read(buf)
				answers := 0
				for _, b := range buf[:n] {
					switch {
					case b == "\r\n\r\n"[m]:
						m++
					case b == '\r':
						m = 1
					default:
						m = 0
					}
					if m == 4 {
						answers, m = answers+1, 0
					}
				}
				if answers > 0 {
					if _, err := rw.Write(bytes.Repeat(response, answers)); err != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

func benchSinkTLS() (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench sink"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"http/1.1"}}, nil
}

// startBenchSink runs the sink in a child process and returns its URL;
// RATECHECK_BENCH_URL names a sink already running instead (bench/sink:
// then perf stat of the test binary counts the client's system calls alone).
func startBenchSink(b *testing.B, scheme string) string {
	b.Helper()
	if u := os.Getenv("RATECHECK_BENCH_URL"); u != "" {
		if !strings.HasPrefix(u, scheme+":") {
			b.Skipf("RATECHECK_BENCH_URL %s is not %s", u, scheme)
		}
		return u
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchSinkEnv+"="+scheme)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return scheme + "://" + strings.TrimSpace(addr) + "/"
}

func BenchmarkMaxThroughput(b *testing.B)    { benchMax(b, "http") }
func BenchmarkMaxThroughputTLS(b *testing.B) { benchMax(b, "https") }

// benchMax is `attack --profile steady --rate max --connections 50 --out
// FILE` for b.N requests.
func benchMax(b *testing.B, scheme string) {
	const conns = 50
	url := startBenchSink(b, scheme)
	req, err := NewRequest("GET", url, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	stream, err := results.CreateStream(filepath.Join(b.TempDir(), "results.jsonl"), results.StreamHeader{Command: "attack"})
	if err != nil {
		b.Fatal(err)
	}
	col := NewCollector(false)
	// The loops stop at b.N themselves: the request budget, when spent,
	// ends the run and abandons the requests still in flight.
	e := New(req, Options{MaxRequests: b.N + conns, MaxConns: 1000, TLS: TLSOptions{Insecure: true}}, col.Add, stream.Add)
	e.Warm(context.Background(), conns)
	ctx := e.Begin(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	user0, sys0, _ := processCPU()
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(b.N))
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.loop(ctx, Shot{Phase: "steady"}, func(*results.Result) bool { return left.Add(-1) > 0 })
		}()
	}
	wg.Wait()
	user1, sys1, _ := processCPU()
	b.StopTimer()
	e.Finish()
	if err := stream.Close(nil, e.Now()); err != nil {
		b.Fatal(err)
	}
	// Each loop stops after the request that used up the count: up to
	// one more per connection than b.N.
	s := col.Metrics.Summary()
	if s.Requests < b.N || s.Requests >= b.N+conns || s.Admitted != s.Requests {
		b.Fatalf("%d requests, %d admitted, errors %v; want %d", s.Requests, s.Admitted, s.ErrorKinds, b.N)
	}
	b.ReportMetric(float64(user1-user0+sys1-sys0)/float64(s.Requests), "cpu-ns/req")
	b.ReportMetric(float64(user1-user0)/float64(s.Requests), "user-ns/req")
}
