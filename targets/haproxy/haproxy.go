package haproxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options configure Start. The zero value is usable.
type Options struct {
	// Bin is the haproxy binary. Default: "haproxy" on $PATH, then
	// /usr/sbin/haproxy.
	Bin string
	// Keep keeps the temporary directory (generated haproxy.cfg,
	// stderr.log) after Stop or a failed Start, for debugging.
	Keep bool
	// StartTimeout bounds `haproxy -c` and the wait for haproxy to answer
	// HTTP. Default 5s.
	StartTimeout time.Duration
}

// Instance is a running haproxy started by Start. Stop it with Stop, or by
// cancelling the context given to Start.
type Instance struct {
	URL        string   // http://127.0.0.1:PORT/
	Dir        string   // private temporary directory: haproxy.cfg, stderr.log
	ConfigPath string   // the generated haproxy.cfg in Dir
	Pid        int      // haproxy; also its process group id
	Notes      []string // what ratecheck rewrote in, or noticed about, the user's config

	opt     Options
	backend *backendServer

	cmd     *exec.Cmd
	exited  chan struct{} // closed when haproxy has been reaped
	waitErr error

	mu        sync.Mutex
	stopAfter func() bool

	stopOnce sync.Once
	stopErr  error
	done     chan struct{}
}

// ErrNotFound is returned by Start and FindBinary when no haproxy binary is
// installed.
var ErrNotFound = errors.New("haproxy not found (looked for `haproxy` on PATH and /usr/sbin/haproxy): install it with `apt-get install haproxy` (Debian/Ubuntu) or your platform's package")

// fallbackBins are tried after $PATH (sbin is often not on a user's PATH).
var fallbackBins = []string{"/usr/sbin/haproxy"}

// FindBinary resolves the haproxy binary: bin if given (a path, or a name
// looked up on $PATH), else `haproxy` on $PATH, else /usr/sbin/haproxy.
func FindBinary(bin string) (string, error) {
	if bin != "" {
		p, err := exec.LookPath(bin)
		if err != nil {
			return "", fmt.Errorf("haproxy binary %q cannot be used: %w", bin, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p, nil
	}
	for _, p := range fallbackBins {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrNotFound
}

// stopGrace bounds each step of stopping haproxy.
var stopGrace = 5 * time.Second

// freePort asks the kernel for a free loopback port. Another process may take
// it before haproxy binds it; Start then retries with a new one.
var freePort = func() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

const bindAttempts = 3

// Start generates a complete haproxy config from configPath in a private
// temporary directory, checks it with `haproxy -c`, starts haproxy in the
// foreground (-db) in its own process group on 127.0.0.1:<free port> and
// waits until it answers HTTP. Cancelling ctx stops the instance (as Stop
// does). On any error nothing is left running and, unless opt.Keep, the
// directory is removed. A configuration that haproxy rejects yields a
// *ConfigError.
func Start(ctx context.Context, configPath string, opt Options) (inst *Instance, err error) {
	if err := platformCheck(); err != nil {
		return nil, err
	}
	if opt.StartTimeout <= 0 {
		opt.StartTimeout = 5 * time.Second
	}
	bin, err := FindBinary(opt.Bin)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lines, err := readLines(configPath)
	if err != nil {
		return nil, fmt.Errorf("haproxy config: %w", err)
	}
	p, err := analyze(configPath, lines)
	if err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "ratecheck-haproxy-*")
	if err != nil {
		return nil, err
	}
	i := &Instance{
		Dir:        dir,
		ConfigPath: filepath.Join(dir, "haproxy.cfg"),
		Notes:      p.notes,
		opt:        opt,
		done:       make(chan struct{}),
	}
	defer func() {
		if err != nil {
			i.cleanupFailed()
			if ce := (*ConfigError)(nil); errors.As(err, &ce) && opt.Keep {
				ce.generated = i.ConfigPath
			} else if opt.Keep {
				err = fmt.Errorf("%w (generated config kept in %s)", err, dir)
			}
		}
	}()
	if i.backend, err = startBackend(); err != nil {
		return nil, err
	}
	rp := renderParams{backendAddr: i.backend.addr, nonce: newNonce()}
	lm := &lineMap{user: configPath, gen: i.ConfigPath}
	for attempt := 1; ; attempt++ {
		if rp.port, err = freePort(); err != nil {
			return nil, err
		}
		text, origins := p.render(rp)
		if err = os.WriteFile(i.ConfigPath, []byte(text), 0o644); err != nil {
			return nil, err
		}
		lm.origins = origins
		if attempt == 1 {
			if err = i.check(ctx, bin, lm); err != nil {
				return nil, err
			}
		}
		err = i.launch(ctx, bin, rp, lm)
		if err == nil {
			break
		}
		if !errors.Is(err, errAddrInUse) || attempt >= bindAttempts {
			return nil, err
		}
	}
	i.URL = fmt.Sprintf("http://127.0.0.1:%d/", rp.port)
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = i.Stop() })
	i.mu.Lock()
	i.stopAfter = stop
	i.mu.Unlock()
	return i, nil
}

func newNonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Stop stops haproxy (SIGTERM to its process group — haproxy's hard stop,
// which does not wait for open connections — SIGKILL after a bound), waits
// until no process of the group is left, stops the internal backend and
// removes Dir unless Options.Keep. It is safe to call more than once and
// concurrently; every call returns the first call's result.
func (i *Instance) Stop() error {
	i.stopOnce.Do(func() {
		i.mu.Lock()
		stop := i.stopAfter
		i.mu.Unlock()
		if stop != nil {
			stop()
		}
		err := i.terminate()
		if i.backend != nil {
			i.backend.close()
		}
		if !i.opt.Keep {
			if e := os.RemoveAll(i.Dir); e != nil && err == nil {
				err = e
			}
		}
		i.stopErr = err
		close(i.done)
	})
	return i.stopErr
}

// Done is closed once Stop has finished, whether it was called directly or
// because the context given to Start was cancelled.
func (i *Instance) Done() <-chan struct{} { return i.done }

func (i *Instance) cleanupFailed() {
	if i.cmd != nil {
		_ = i.terminate()
	}
	if i.backend != nil {
		i.backend.close()
	}
	if !i.opt.Keep {
		os.RemoveAll(i.Dir)
	}
}

// check runs haproxy -c and turns a failure into a *ConfigError; its
// warnings become notes.
func (i *Instance) check(ctx context.Context, bin string, lm *lineMap) error {
	tctx, cancel := context.WithTimeout(ctx, i.opt.StartTimeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, bin, "-c", "-f", i.ConfigPath)
	cmd.Dir = i.Dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		i.Notes = append(i.Notes, lm.warnings(string(out))...)
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if tctx.Err() != nil {
		return fmt.Errorf("haproxy -c did not finish within %v", i.opt.StartTimeout)
	}
	if ce := lm.configError(string(out)); ce != nil {
		return ce
	}
	return fmt.Errorf("haproxy -c failed (%v): %s", err, lm.translate(strings.TrimSpace(string(out))))
}

var errAddrInUse = errors.New("address already in use")

type startError struct {
	msg    string
	inUse  bool
	detail string
}

func (e *startError) Error() string {
	if e.detail == "" {
		return e.msg
	}
	return e.msg + ": " + e.detail
}

func (e *startError) Is(target error) bool { return target == errAddrInUse && e.inUse }

// launch starts haproxy in the foreground and waits until it answers.
func (i *Instance) launch(ctx context.Context, bin string, rp renderParams, lm *lineMap) error {
	stderrPath := filepath.Join(i.Dir, "stderr.log")
	stderr, err := os.Create(stderrPath)
	if err != nil {
		return err
	}
	defer stderr.Close()
	// -db: stay in the foreground, no daemon, no master process.
	cmd := exec.Command(bin, "-db", "-f", i.ConfigPath)
	cmd.Dir = i.Dir
	cmd.Stdout, cmd.Stderr = stderr, stderr
	setProcAttrs(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting haproxy: %w", err)
	}
	i.cmd, i.Pid = cmd, cmd.Process.Pid
	i.exited = make(chan struct{})
	go func(exited chan struct{}) {
		i.waitErr = cmd.Wait()
		close(exited)
	}(i.exited)

	rerr := i.awaitReady(ctx, rp)
	if rerr == nil {
		return nil
	}
	exitedEarly := false
	select {
	case <-i.exited:
		exitedEarly = true
	default:
	}
	_ = i.terminate()
	i.cmd = nil
	if ctx.Err() != nil {
		return ctx.Err()
	}
	text := lm.translate(strings.TrimSpace(readAll(stderrPath)))
	se := &startError{detail: text, inUse: errors.Is(rerr, errAddrInUse) || strings.Contains(text, "Address already in use")}
	switch {
	case exitedEarly:
		se.msg = fmt.Sprintf("haproxy exited during start-up (%v)", i.waitErr)
	default:
		se.msg = fmt.Sprintf("haproxy did not answer on 127.0.0.1:%d within %v (%v)", rp.port, i.opt.StartTimeout, rerr)
	}
	return se
}

// awaitReady polls ReadyPath, bounded by StartTimeout, until it answers with
// this start's nonce.
func (i *Instance) awaitReady(ctx context.Context, rp renderParams) error {
	client := &http.Client{
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		Timeout:   time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	defer client.CloseIdleConnections()
	url := fmt.Sprintf("http://127.0.0.1:%d%s", rp.port, ReadyPath)
	deadline := time.NewTimer(i.opt.StartTimeout)
	defer deadline.Stop()
	interval := 2 * time.Millisecond
	var last error = errors.New("no answer yet")
	for {
		resp, err := client.Get(url)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.Header.Get(readyHeader) == rp.nonce {
				return nil
			}
			// Someone else answers on this port: it is not ours.
			return fmt.Errorf("another server answers on 127.0.0.1:%d: %w", rp.port, errAddrInUse)
		}
		last = err
		t := time.NewTimer(interval)
		select {
		case <-i.exited:
			t.Stop()
			return errors.New("haproxy exited")
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-deadline.C:
			t.Stop()
			return last
		case <-t.C:
		}
		interval = min(interval*2, 50*time.Millisecond)
	}
}

// terminate stops the process group and waits until none of it is left.
func (i *Instance) terminate() error {
	if i.cmd == nil {
		return nil
	}
	pgid := i.Pid
	select {
	case <-i.exited:
	default:
		_ = killGroup(pgid, sigTerm)
		if !waitClosed(i.exited, stopGrace) {
			_ = killGroup(pgid, sigKill)
			if !waitClosed(i.exited, stopGrace) {
				return fmt.Errorf("haproxy %d did not exit after SIGKILL", pgid)
			}
		}
	}
	// haproxy is reaped; anything it started (external checks, say) is
	// still in the group, which therefore cannot have been reused.
	deadline := time.Now().Add(stopGrace)
	interval := time.Millisecond
	for groupAlive(pgid) {
		_ = killGroup(pgid, sigKill)
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of haproxy's group %d survived SIGKILL for %v", pgid, stopGrace)
		}
		t := time.NewTimer(interval)
		<-t.C
		interval = min(interval*2, 50*time.Millisecond)
	}
	return nil
}

func waitClosed(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// readAll returns at most the last 16 KiB of path.
func readAll(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	const max = 16 << 10
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}
