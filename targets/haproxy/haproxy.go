package haproxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/targets/internal/proc"
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

	opt Options
	run *proc.Run // haproxy, the loopback backend, Dir; stops once
}

// ErrNotFound is returned by Start and FindBinary when no haproxy binary is
// installed.
var ErrNotFound = errors.New("haproxy not found (looked for `haproxy` on PATH and /usr/sbin/haproxy): install it with `apt-get install haproxy` (Debian/Ubuntu) or your platform's package")

// fallbackBins are tried after $PATH (sbin is often not on a user's PATH).
var fallbackBins = []string{"/usr/sbin/haproxy"}

// FindBinary resolves the haproxy binary: bin if given (a path, or a name
// looked up on $PATH), else `haproxy` on $PATH, else /usr/sbin/haproxy.
func FindBinary(bin string) (string, error) {
	return proc.FindBinary("haproxy", bin, fallbackBins, ErrNotFound)
}

// freePort picks the loopback port haproxy is to listen on; a test replaces
// it with one that is taken.
var freePort = proc.FreePort

// Start generates a complete haproxy config from configPath in a private
// temporary directory, checks it with `haproxy -c`, starts haproxy in the
// foreground (-db) in its own process group on 127.0.0.1:<free port> and
// waits until it answers HTTP. Cancelling ctx stops the instance (as Stop
// does). On any error nothing is left running and, unless opt.Keep, the
// directory is removed. A configuration that haproxy rejects yields a
// *ConfigError.
func Start(ctx context.Context, configPath string, opt Options) (inst *Instance, err error) {
	bin, err := proc.Preflight("haproxy", &opt.StartTimeout, func() (string, error) { return FindBinary(opt.Bin) })
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
		run:        proc.NewRun(dir, opt.Keep),
	}
	defer func() {
		if err != nil {
			err = proc.Failed(i.run, err, i.ConfigPath, func(ce *ConfigError, path string) { ce.generated = path })
		}
	}()
	if i.run.Backend, err = proc.StartBackend(); err != nil {
		return nil, err
	}
	rp := renderParams{backendAddr: i.run.Backend.Addr, nonce: newNonce()}
	lm := &lineMap{user: configPath, gen: i.ConfigPath}
	port, err := proc.BindRetry(freePort, func(attempt, port int) error {
		rp.port = port
		text, origins := p.render(rp)
		if err := os.WriteFile(i.ConfigPath, []byte(text), 0o644); err != nil {
			return err
		}
		lm.origins = origins
		if attempt == 1 {
			if err := i.check(ctx, bin, lm); err != nil {
				return err
			}
		}
		return i.launch(ctx, bin, rp, lm)
	})
	if err != nil {
		return nil, err
	}
	i.URL = fmt.Sprintf("http://127.0.0.1:%d/", port)
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	i.run.StopOnCancel(ctx)
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
func (i *Instance) Stop() error { return i.run.Stop() }

// Done is closed once Stop has finished, whether it was called directly or
// because the context given to Start was cancelled.
func (i *Instance) Done() <-chan struct{} { return i.run.Done() }

// check runs haproxy -c and turns a failure into a *ConfigError; its
// warnings become notes.
func (i *Instance) check(ctx context.Context, bin string, lm *lineMap) error {
	out, refused, err := proc.CheckConfig(ctx, i.opt.StartTimeout, i.Dir, "haproxy -c", bin, "-c", "-f", i.ConfigPath)
	if err != nil {
		return err
	}
	if refused == nil {
		i.Notes = append(i.Notes, lm.warnings(out)...)
		return nil
	}
	if ce := lm.configError(out); ce != nil {
		return ce
	}
	return fmt.Errorf("haproxy -c failed (%v): %s", refused, lm.translate(strings.TrimSpace(out)))
}

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
	fail, err := i.run.Launch(ctx, cmd, "haproxy", func(p *proc.Process) error {
		i.Pid = p.Pid
		return i.awaitReady(ctx, p, rp)
	})
	if err != nil || fail == nil {
		return err
	}
	text := lm.translate(strings.TrimSpace(proc.ReadTail(stderrPath, 0)))
	se := &proc.StartError{Detail: text, InUse: errors.Is(fail.Ready, proc.ErrAddrInUse) || strings.Contains(text, "Address already in use")}
	switch {
	case fail.Exited:
		se.Msg = fmt.Sprintf("haproxy exited during start-up (%v)", fail.WaitErr)
	default:
		se.Msg = fmt.Sprintf("haproxy did not answer on 127.0.0.1:%d within %v (%v)", rp.port, i.opt.StartTimeout, fail.Ready)
	}
	return se
}

// awaitReady polls ReadyPath, bounded by StartTimeout, until it answers with
// this start's nonce.
func (i *Instance) awaitReady(ctx context.Context, p *proc.Process, rp renderParams) error {
	client := proc.ReadyClient()
	defer client.CloseIdleConnections()
	url := fmt.Sprintf("http://127.0.0.1:%d%s", rp.port, ReadyPath)
	return p.AwaitReady(ctx, i.opt.StartTimeout, func() (bool, error) {
		resp, err := proc.Get(client, url)
		if err != nil {
			return false, err
		}
		if resp.Header.Get(readyHeader) != rp.nonce {
			// Someone else answers on this port: it is not ours.
			return true, fmt.Errorf("another server answers on 127.0.0.1:%d: %w", rp.port, proc.ErrAddrInUse)
		}
		return true, nil
	})
}
