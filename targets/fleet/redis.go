package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is an ephemeral redis-server ratecheck started: loopback,
// a free port, no persistence (nothing written to disk), stopped by Close.
type redisServer struct {
	Addr   string
	cmd    *exec.Cmd
	exited chan struct{}
	stderr *strings.Builder
	once   sync.Once
}

// redisBinary finds redis-server: on PATH or where Debian installs it.
func redisBinary() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/bin/redis-server", "/usr/sbin/redis-server", "/usr/local/bin/redis-server"} {
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", ErrNoRedis
}

// ErrNoRedis: a redis store was asked for without redis=ADDR, and
// redis-server is not installed.
var ErrNoRedis = errors.New("redis-server is not installed: install it (Debian: apt-get install -y redis-server) or give redis=HOST:PORT of a running Redis")

// startRedis starts redis-server on a free loopback port and waits until
// it answers PING (at most readyTimeout).
func startRedis(ctx context.Context) (*redisServer, error) {
	bin, err := redisBinary()
	if err != nil {
		return nil, err
	}
	var lastErr error
	for range 3 { // a port taken between choosing and binding: choose again
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s, err := launchRedis(ctx, bin, port)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

const readyTimeout = 5 * time.Second

func launchRedis(ctx context.Context, bin string, port int) (*redisServer, error) {
	s := &redisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), exited: make(chan struct{}), stderr: &strings.Builder{}}
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning")
	s.cmd.Stdout = s.stderr
	s.cmd.Stderr = s.stderr
	setProcAttrs(s.cmd)
	started := make(chan error, 1)
	go func() {
		// The death signal is tied to the thread that started the child:
		// keep it locked until the child is gone.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := s.cmd.Start(); err != nil {
			started <- err
			close(s.exited)
			return
		}
		started <- nil
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer rdb.Close()
	deadline := time.Now().Add(readyTimeout)
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("redis-server on port %d exited at once: %s", port, strings.TrimSpace(s.stderr.String()))
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := rdb.Ping(pctx).Err()
		cancel()
		if err == nil {
			return s, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Close()
			return nil, fmt.Errorf("redis-server on port %d did not answer PING within %s: %v", port, readyTimeout, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a child's readiness, bounded by the deadline
	}
}

// Close stops the server (SIGTERM, then SIGKILL after 2 s) and waits for it.
func (s *redisServer) Close() error {
	s.once.Do(func() {
		if s.cmd.Process == nil {
			return
		}
		_ = signalTerm(s.cmd.Process)
		select {
		case <-s.exited:
		case <-time.After(2 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
	return nil
}

// Pid is the server's process id.
func (s *redisServer) Pid() int { return s.cmd.Process.Pid }

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
