package nginx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/targets/internal/proc"
)

// Options configure Start. The zero value is usable.
type Options struct {
	// Bin is the nginx binary. Default: "nginx" looked up on $PATH, then
	// /usr/sbin/nginx.
	Bin string
	// Keep keeps the temporary directory (generated nginx.conf, error.log,
	// stderr.log) after Stop or a failed Start, for debugging.
	Keep bool
	// Upstream is an optional URL (scheme://host[:port], no path) that
	// locations without a content handler proxy to. Empty: they are answered
	// with 200 "ok\n" by an HTTP server that Start runs on 127.0.0.1 and Stop
	// stops. Ignored for full nginx.conf files, which bring their own content.
	Upstream string
	// StartTimeout bounds `nginx -t` and the wait for nginx to answer HTTP.
	// Default 5s.
	StartTimeout time.Duration
	// TLSCertFile and TLSKeyFile, when both are set, make the loopback
	// listener speak TLS with that certificate and key (PEM files, as
	// nginx's ssl_certificate and ssl_certificate_key take them); URL is then
	// https://. For testing clients over https against a real nginx.
	TLSCertFile, TLSKeyFile string
	// HTTP2 makes that TLS listener offer HTTP/2 beside HTTP/1.1 (ALPN),
	// as `listen … ssl http2` does.
	HTTP2 bool
}

// Instance is a running nginx started by Start. Stop it with Stop, or by
// cancelling the context given to Start.
type Instance struct {
	URL        string   // http://127.0.0.1:PORT/ — the default server (https:// with Options.TLSCertFile)
	Dir        string   // private temporary directory: nginx.conf, error.log, stderr.log, temp paths
	ConfigPath string   // the generated nginx.conf in Dir
	ErrorLog   string   // nginx's error log in Dir (limit_req logs rejections and delays there)
	Pid        int      // the nginx master; also its process group id
	Notes      []string // what ratecheck rewrote in, or noticed about, the user's config

	opt Options
	run *proc.Run // the master, the internal backend, Dir; stops once
}

// ErrNotFound is returned by Start and FindBinary when no nginx binary is
// installed.
var ErrNotFound = errors.New("nginx not found (looked for `nginx` on PATH and /usr/sbin/nginx): install it with `apt-get install nginx-light` (Debian/Ubuntu) or your platform's package, or pass --nginx-bin")

// fallbackBins are tried after $PATH (sbin is often not on a user's PATH).
var fallbackBins = []string{"/usr/sbin/nginx"}

// FindBinary resolves the nginx binary: bin if given (a path, or a name
// looked up on $PATH), else `nginx` on $PATH, else /usr/sbin/nginx. It
// returns ErrNotFound when there is none.
func FindBinary(bin string) (string, error) {
	return proc.FindBinary("nginx", bin, fallbackBins, ErrNotFound)
}

// ConfigError is a configuration that nginx, or ratecheck before it, refused.
// File and Line point into the user's files (translated from the generated
// config); Line is 0 when nobody could tell the line.
type ConfigError struct {
	File string
	Line int
	// NginxMessage is nginx's own message with its level, without nginx's
	// "in FILE:LINE" (which names the generated file), e.g.
	// `[emerg] unknown directive "limt_req"`. Empty when ratecheck found the
	// problem itself; then Reason says what it is.
	NginxMessage string
	Reason       string

	inferred      bool   // nginx named no line; ratecheck found the directive
	inGenerated   bool   // nginx pointed at a line ratecheck added
	generatedLine int    // line in the generated config
	generated     string // the generated config, when kept (Options.Keep)
	hint          string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.NginxMessage == "" {
		fmt.Fprintf(&b, "%s: ratecheck cannot run this nginx config: %s.", loc, e.Reason)
	} else {
		switch {
		case e.inGenerated:
			fmt.Fprintf(&b, "nginx rejected the config ratecheck generated from %s: %s, at generated line %d, which ratecheck added itself (likely a clash with a directive in your file).", e.File, e.NginxMessage, e.generatedLine)
		case e.inferred:
			fmt.Fprintf(&b, "%s: nginx rejected the configuration: %s (found by `nginx -t`; nginx names no line for this error, ratecheck points at the directive that causes it).", loc, e.NginxMessage)
		case e.Line == 0:
			fmt.Fprintf(&b, "%s: nginx rejected the configuration: %s (nginx names no line for this error).", e.File, e.NginxMessage)
		default:
			fmt.Fprintf(&b, "%s: nginx rejected the configuration: %s (found by `nginx -t` on the complete config ratecheck generates from your file; the line is translated back to your file).", loc, e.NginxMessage)
		}
	}
	if e.hint != "" {
		b.WriteString(" " + e.hint)
	}
	if e.generated != "" {
		fmt.Fprintf(&b, " The generated config is kept at %s.", e.generated)
	}
	return b.String()
}

// freePort picks the loopback port nginx is to listen on; a test replaces
// it with one that is taken.
var freePort = proc.FreePort

// Start generates a complete nginx config from configPath in a private
// temporary directory, checks it with `nginx -t`, starts nginx in the
// foreground in its own process group on 127.0.0.1:<free port> and waits
// until it answers HTTP. Cancelling ctx stops the instance (as Stop does). On
// any error nothing is left running and, unless opt.Keep, the directory is
// removed. A configuration that nginx rejects yields a *ConfigError.
func Start(ctx context.Context, configPath string, opt Options) (inst *Instance, err error) {
	bin, err := proc.Preflight("nginx", &opt.StartTimeout, func() (string, error) { return FindBinary(opt.Bin) })
	if err != nil {
		return nil, err
	}
	var up *url.URL
	if opt.Upstream != "" {
		if up, err = parseUpstream(opt.Upstream); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	absConf, err := filepath.Abs(configPath)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(absConf); err != nil {
		return nil, fmt.Errorf("nginx config: %w", err)
	}
	stmts, err := loadFile(configPath, filepath.Dir(absConf), 0)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return nil, &ConfigError{File: se.file, Line: se.line, Reason: se.msg}
		}
		return nil, fmt.Errorf("nginx config: %w", err)
	}

	dir, err := os.MkdirTemp("", "ratecheck-nginx-*")
	if err != nil {
		return nil, err
	}
	// nginx workers run as an unprivileged user when the master is root; they
	// must be able to traverse the directory to reach the temp paths.
	if err := os.Chmod(dir, 0o711); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// nginx creates the last element of temp and cache paths only.
	for _, sub := range []string{"tmp", "cache"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	i := &Instance{
		Dir:        dir,
		ConfigPath: filepath.Join(dir, "nginx.conf"),
		ErrorLog:   filepath.Join(dir, "error.log"),
		opt:        opt,
		run:        proc.NewRun(dir, opt.Keep),
	}
	defer func() {
		if err != nil {
			err = proc.Failed(i.run, err, i.ConfigPath, func(ce *ConfigError, path string) { ce.generated = path })
		}
	}()

	p, err := analyze(configPath, stmts, dir)
	if err != nil {
		return nil, err
	}
	i.Notes = p.notes
	rp := renderParams{generatedFor: configPath, upstream: up}
	if opt.TLSCertFile != "" && opt.TLSKeyFile != "" {
		if rp.tlsCert, err = filepath.Abs(opt.TLSCertFile); err != nil {
			return nil, err
		}
		if rp.tlsKey, err = filepath.Abs(opt.TLSKeyFile); err != nil {
			return nil, err
		}
		rp.http2 = opt.HTTP2
	}
	rp.nofile, rp.workerConns = fileLimits()
	if p.needBackend {
		if up != nil {
			rp.backendAddr = hostPort(up)
		} else {
			if i.run.Backend, err = proc.StartBackend(); err != nil {
				return nil, err
			}
			rp.backendAddr = i.run.Backend.Addr
		}
	}
	lm := &lineMap{user: configPath, stmts: stmts}

	useE := supportsE(bin)
	port, err := proc.BindRetry(freePort, func(attempt, port int) error {
		rp.port = port
		text, origins := p.render(rp)
		if err := os.WriteFile(i.ConfigPath, []byte(text), 0o644); err != nil {
			return err
		}
		lm.gen, lm.origins = i.ConfigPath, origins
		if attempt == 1 {
			if err := i.test(ctx, bin, useE, lm); err != nil {
				return err
			}
		}
		return i.launch(ctx, bin, useE, port, lm)
	})
	if err != nil {
		return nil, err
	}
	i.URL = fmt.Sprintf("%s://127.0.0.1:%d/", i.scheme(), port)
	if err = ctx.Err(); err != nil {
		return nil, err
	}
	i.run.StopOnCancel(ctx)
	return i, nil
}

// scheme is the listener's: https when Options give it a certificate.
func (i *Instance) scheme() string {
	if i.opt.TLSCertFile != "" && i.opt.TLSKeyFile != "" {
		return "https"
	}
	return "http"
}

// Stop stops nginx (SIGTERM to its process group — nginx's fast shutdown;
// SIGQUIT, graceful, would wait for requests that limit_req is still
// delaying — SIGKILL after a bound), waits until no process of the group is
// left, stops the internal backend and removes Dir unless Options.Keep. It
// is safe to call more than once and concurrently; every call returns the
// first call's result.
func (i *Instance) Stop() error { return i.run.Stop() }

// Done is closed once Stop has finished, whether it was called directly or
// because the context given to Start was cancelled.
func (i *Instance) Done() <-chan struct{} { return i.run.Done() }

func (i *Instance) baseArgs(useE bool) []string {
	args := []string{"-p", i.Dir + string(filepath.Separator), "-c", i.ConfigPath, "-g", "daemon off;"}
	if useE {
		args = append(args, "-e", i.ErrorLog)
	}
	return args
}

// test runs nginx -t and turns a failure into a *ConfigError.
func (i *Instance) test(ctx context.Context, bin string, useE bool, lm *lineMap) error {
	out, refused, err := proc.CheckConfig(ctx, i.opt.StartTimeout, i.Dir, "nginx -t", bin, append([]string{"-t"}, i.baseArgs(useE)...)...)
	if err != nil || refused == nil {
		return err
	}
	if ce := lm.configError(out); ce != nil {
		return ce
	}
	return fmt.Errorf("nginx -t failed (%v): %s", refused, lm.translate(strings.TrimSpace(out)))
}

var bindInUseRE = regexp.MustCompile(`bind\(\) to \S+ failed \(\d+: Address already in use\)`)

// launch starts nginx in the foreground and waits until it answers.
func (i *Instance) launch(ctx context.Context, bin string, useE bool, port int, lm *lineMap) error {
	stderr, err := os.Create(filepath.Join(i.Dir, "stderr.log"))
	if err != nil {
		return err
	}
	defer stderr.Close()
	var logOffset int64
	if fi, err := os.Stat(i.ErrorLog); err == nil {
		logOffset = fi.Size()
	}
	pidFile := filepath.Join(i.Dir, "nginx.pid")
	os.Remove(pidFile)

	cmd := exec.Command(bin, i.baseArgs(useE)...)
	cmd.Dir = i.Dir
	cmd.Stdout, cmd.Stderr = stderr, stderr
	fail, err := i.run.Launch(ctx, cmd, "nginx", func(p *proc.Process) error {
		i.Pid = p.Pid
		return i.awaitReady(ctx, p, port, pidFile, stderr.Name())
	})
	if err != nil || fail == nil {
		return err
	}
	text := proc.ReadTail(filepath.Join(i.Dir, "stderr.log"), 0) + "\n" + proc.ReadTail(i.ErrorLog, logOffset)
	text = lm.translate(strings.TrimSpace(text))
	se := &proc.StartError{Detail: text, InUse: errors.Is(fail.Ready, proc.ErrAddrInUse) || bindInUseRE.MatchString(text)}
	switch {
	case se.InUse && !fail.Exited:
		se.Msg = fmt.Sprintf("nginx could not bind 127.0.0.1:%d", port)
	case fail.Exited:
		se.Msg = fmt.Sprintf("nginx exited during start-up (%v)", fail.WaitErr)
	default:
		se.Msg = fmt.Sprintf("nginx did not answer on 127.0.0.1:%d within %v (%v)", port, i.opt.StartTimeout, fail.Ready)
	}
	return se
}

// awaitReady polls, bounded by StartTimeout, until nginx has written its pid
// file (it does so only after binding every listening socket, so the port is
// ours) and answers an HTTP request on ReadyPath.
func (i *Instance) awaitReady(ctx context.Context, p *proc.Process, port int, pidFile, stderrPath string) error {
	client := proc.ReadyClient()
	defer client.CloseIdleConnections()
	probe := fmt.Sprintf("%s://127.0.0.1:%d%s", i.scheme(), port, ReadyPath)
	want := strconv.Itoa(i.Pid)
	return p.AwaitReady(ctx, i.opt.StartTimeout, func() (bool, error) {
		// nginx retries a failed bind() 5 times, 500 ms apart, before it
		// gives up; when the port is taken, give up at once and let Start
		// pick another.
		if b, err := os.ReadFile(stderrPath); err == nil && bindInUseRE.Match(b) {
			return true, proc.ErrAddrInUse
		}
		b, err := os.ReadFile(pidFile)
		if err != nil || strings.TrimSpace(string(b)) != want {
			return false, nil
		}
		if _, err := proc.Get(client, probe); err != nil {
			return false, err
		}
		return true, nil
	})
}

func parseUpstream(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("nginx upstream %q: want http://host[:port] or https://host[:port]", raw)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("nginx upstream %q: no path or query allowed (nginx passes the request URI through unchanged)", raw)
	}
	return u, nil
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// supportsE reports whether bin accepts -e (nginx 1.19.5+), which sends the
// start-up error log into the private directory rather than the compiled-in
// path (/var/log/nginx/error.log on many builds).
var eCache sync.Map

var versionRE = regexp.MustCompile(`(?i)(nginx|openresty)/(\d+)\.(\d+)\.(\d+)`)

func supportsE(bin string) bool {
	if v, ok := eCache.Load(bin); ok {
		return v.(bool)
	}
	out, _ := exec.Command(bin, "-v").CombinedOutput()
	ok := false
	if m := versionRE.FindStringSubmatch(string(out)); m != nil {
		a, _ := strconv.Atoi(m[2])
		b, _ := strconv.Atoi(m[3])
		c, _ := strconv.Atoi(m[4])
		ok = a > 1 || (a == 1 && (b > 19 || (b == 19 && c >= 5)))
	}
	eCache.Store(bin, ok)
	return ok
}

// lineMap translates positions in the generated config back to the user's.
type lineMap struct {
	user    string
	gen     string
	origins []origin
	stmts   []*stmt
}

func (m *lineMap) lookup(line int) (origin, bool) {
	if line < 1 || line > len(m.origins) {
		return origin{}, false
	}
	return m.origins[line-1], true
}

var locRE = regexp.MustCompile(` in (\S+):(\d+)`)

// translate rewrites every "in GENERATED:N" in nginx output to the user's
// file and line.
func (m *lineMap) translate(text string) string {
	return locRE.ReplaceAllStringFunc(text, func(s string) string {
		sm := locRE.FindStringSubmatch(s)
		if sm[1] != m.gen {
			return s
		}
		n, _ := strconv.Atoi(sm[2])
		o, ok := m.lookup(n)
		if !ok || o.file == "" {
			return fmt.Sprintf(" in a line ratecheck generated (%s:%d)", m.gen, n)
		}
		return fmt.Sprintf(" in %s:%d", o.file, o.line)
	})
}

var nginxMsgRE = regexp.MustCompile(`^(?:nginx: |\d{4}/\d\d/\d\d \d\d:\d\d:\d\d )\[(emerg|alert|crit)\] (?:\d+#\d+: )?(.*)$`)
var zeroZoneRE = regexp.MustCompile(`zero size shared memory zone "([^"]*)"`)

// configError extracts nginx's first fatal message from nginx -t output.
func (m *lineMap) configError(out string) *ConfigError {
	for _, ln := range strings.Split(out, "\n") {
		sm := nginxMsgRE.FindStringSubmatch(strings.TrimSpace(ln))
		if sm == nil {
			continue
		}
		msg := sm[2]
		ce := &ConfigError{File: m.user}
		if loc := locRE.FindStringSubmatchIndex(msg); loc != nil && loc[1] == len(msg) {
			file := msg[loc[2]:loc[3]]
			n, _ := strconv.Atoi(msg[loc[4]:loc[5]])
			msg = msg[:loc[0]]
			if file == m.gen {
				if o, ok := m.lookup(n); ok && o.file != "" {
					ce.File, ce.Line = o.file, o.line
				} else {
					ce.inGenerated, ce.generatedLine = true, n
				}
			} else {
				ce.File, ce.Line = file, n
			}
		}
		ce.NginxMessage = "[" + sm[1] + "] " + msg
		if zm := zeroZoneRE.FindStringSubmatch(msg); zm != nil && ce.Line == 0 {
			// nginx reports an undefined zone after parsing, without a
			// line; point at the directive that uses it.
			if s := findZoneUse(m.stmts, zm[1]); s != nil {
				ce.File, ce.Line, ce.inferred = s.file, s.endLine, true
			}
			ce.hint = fmt.Sprintf("No limit_req_zone or limit_conn_zone defines zone %q, so nginx created it with size 0.", zm[1])
		}
		return ce
	}
	return nil
}

func findZoneUse(stmts []*stmt, zone string) *stmt {
	var found *stmt
	walk(stmts, nil, func(s *stmt, _ []*stmt) bool {
		if found != nil {
			return false
		}
		switch s.name {
		case "limit_req":
			for _, a := range s.args {
				if a.val == "zone="+zone {
					found = s
				}
			}
		case "limit_conn":
			if s.arg(0) == zone {
				found = s
			}
		}
		return true
	})
	return found
}
