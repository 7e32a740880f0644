package proc

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func itoa(n int) string { return strconv.Itoa(n) }

func TestFindBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	notFound := errors.New("not found")
	dir := t.TempDir()
	exe := filepath.Join(dir, "srv")
	plain := filepath.Join(dir, "plain")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(plain, []byte(""), 0o644)
	if p, err := FindBinary("srv", "", []string{filepath.Join(dir, "none"), plain, exe}, notFound); err != nil || p != exe {
		t.Errorf("fallbacks: %q %v, want the first executable %s", p, err, exe)
	}
	if _, err := FindBinary("srv", "", []string{plain}, notFound); err != notFound {
		t.Errorf("no executable: err %v, want notFound", err)
	}
	if p, err := FindBinary("srv", exe, nil, notFound); err != nil || p != exe {
		t.Errorf("explicit bin: %q %v", p, err)
	}
	if _, err := FindBinary("srv", "/nonexistent/srv", nil, notFound); err == nil || !strings.HasPrefix(err.Error(), `srv binary "/nonexistent/srv" cannot be used: `) {
		t.Errorf("explicit missing bin: %v", err)
	}
}

func TestBindRetry(t *testing.T) {
	next := 100
	pick := func() (int, error) { next++; return next, nil }
	var tried []int
	inUseUntil := func(ok int) func(int, int) error {
		return func(attempt, port int) error {
			tried = append(tried, attempt)
			if port < ok {
				return &StartError{Msg: "bind", InUse: true}
			}
			return nil
		}
	}
	if port, err := BindRetry(pick, inUseUntil(103)); err != nil || port != 103 || len(tried) != 3 {
		t.Errorf("third port free: port %d, err %v, attempts %v", port, err, tried)
	}
	tried = nil
	if _, err := BindRetry(pick, inUseUntil(1000)); !errors.Is(err, ErrAddrInUse) || len(tried) != BindAttempts {
		t.Errorf("every port taken: err %v after attempts %v, want ErrAddrInUse after %d", err, tried, BindAttempts)
	}
	other := errors.New("config refused")
	calls := 0
	if _, err := BindRetry(pick, func(int, int) error { calls++; return other }); err != other || calls != 1 {
		t.Errorf("other error: %v after %d calls, want it at once", err, calls)
	}
	pickErr := errors.New("no ports")
	if _, err := BindRetry(func() (int, error) { return 0, pickErr }, inUseUntil(0)); err != pickErr {
		t.Errorf("pick failing: %v", err)
	}
	if port, err := FreePort(); err != nil || port <= 0 {
		t.Errorf("FreePort: %d %v", port, err)
	}
}

func TestStartError(t *testing.T) {
	e := &StartError{Msg: "nginx exited", Detail: "bind() failed"}
	if e.Error() != "nginx exited: bind() failed" || errors.Is(e, ErrAddrInUse) {
		t.Errorf("%q, in use %v", e, errors.Is(e, ErrAddrInUse))
	}
	e = &StartError{Msg: "nginx could not bind", InUse: true}
	if e.Error() != "nginx could not bind" || !errors.Is(e, ErrAddrInUse) {
		t.Errorf("%q, in use %v", e, errors.Is(e, ErrAddrInUse))
	}
}

func TestBackend(t *testing.T) {
	b, err := StartBackend()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !strings.HasPrefix(b.Addr, "127.0.0.1:") {
		t.Errorf("Addr %s, want loopback", b.Addr)
	}
	resp, err := ReadyClient().Post("http://"+b.Addr+"/any/path", "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("%d %q %q", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
	b.Close()
	b.Close() // twice is fine
}

func TestReadTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	os.WriteFile(p, []byte("first attempt\nsecond\n"), 0o644)
	if got := ReadTail(p, int64(len("first attempt\n"))); got != "second\n" {
		t.Errorf("from offset: %q", got)
	}
	big := strings.Repeat("a", 20<<10) + "END"
	os.WriteFile(p, []byte(big), 0o644)
	if got := ReadTail(p, 0); len(got) != 16<<10 || !strings.HasSuffix(got, "END") {
		t.Errorf("capped tail: %d bytes, ends %q", len(got), got[len(got)-3:])
	}
	if got := ReadTail(filepath.Join(t.TempDir(), "none"), 0); got != "" {
		t.Errorf("missing file: %q", got)
	}
}
