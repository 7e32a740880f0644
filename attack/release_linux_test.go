//go:build linux

package attack

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"golang.org/x/sys/unix"
)

func schedPolicy(t *testing.T) int {
	t.Helper()
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return int(a.Policy)
}

// enterRealtime either switches the thread to SCHED_FIFO and back, or —
// without the privilege — changes nothing; the burst profile reports which.
func TestRealtimeReleaseRaisesAndRestores(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if p := schedPolicy(t); p != unix.SCHED_NORMAL {
		t.Fatalf("test thread starts with policy %d", p)
	}
	leave, ok := enterRealtime()
	if ok {
		if p := schedPolicy(t); p != unix.SCHED_FIFO {
			t.Fatalf("enterRealtime reported ok, policy is %d", p)
		}
	} else if p := schedPolicy(t); p != unix.SCHED_NORMAL {
		t.Fatalf("enterRealtime failed but changed the policy to %d", p)
	}
	leave()
	if p := schedPolicy(t); p != unix.SCHED_NORMAL {
		t.Fatalf("policy after leave: %d", p)
	}

	rep, _, _ := runProfile(t, "builtin:none", Burst{K: 20}, Options{})
	if got := rep.Metrics.Burst.RealtimeRelease; got != ok {
		t.Fatalf("burst reports realtime_release %v, this process may use real-time priority: %v", got, ok)
	}
}

func affinity(t *testing.T) unix.CPUSet {
	t.Helper()
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(0, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPinToCPUAndRestore(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old := affinity(t)
	n := old.Count()
	for i := range 3 {
		restore := pinToCPU(i)
		pinned := affinity(t)
		want := n // one CPU: nothing to choose, the mask stays
		if n >= 2 {
			want = 1
		}
		if pinned.Count() != want {
			t.Fatalf("pinToCPU(%d): %d CPUs allowed of %d", i, pinned.Count(), n)
		}
		restore()
		if affinity(t) != old {
			t.Fatalf("pinToCPU(%d): mask not restored", i)
		}
	}
}

// fineSlackThreads lists this process's threads whose timer slack is the
// pacing threads' 1 ns, except the main thread: a pacing goroutine the
// scheduler ran there cannot retire it (the process would end), so the
// runtime parks it for good instead — never to run anything again.
func fineSlackThreads(t *testing.T) []string {
	t.Helper()
	tids, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var fine []string
	for _, tid := range tids {
		if tid.Name() == strconv.Itoa(os.Getpid()) {
			continue
		}
		b, err := os.ReadFile("/proc/" + tid.Name() + "/timerslack_ns")
		if err != nil {
			continue // the thread just exited
		}
		if strings.TrimSpace(string(b)) == "1" {
			fine = append(fine, tid.Name())
		}
	}
	return fine
}

// The threads that pace and release set 1 ns timer slack (and real-time
// priority, and a CPU mask); they must not be handed back to the runtime
// for other goroutines: after a paced run and a burst, no thread of the
// process keeps the setting. A retired thread exits shortly after its
// goroutine, so the check waits a bounded while for that.
func TestPacingThreadsRetired(t *testing.T) {
	runtime.LockOSThread() // this thread reads its own slack below
	onPacingThread(func() {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(unix.Gettid()) + "/timerslack_ns")
		if err != nil || strings.TrimSpace(string(b)) != "1" {
			t.Errorf("a pacing thread's timer slack: %q, %v", b, err)
		}
	})
	runtime.UnlockOSThread()
	runProfile(t, "builtin:none", Steady{Rate: 200, Duration: 50 * time.Millisecond}, Options{})
	runProfile(t, "builtin:none", Burst{K: 20}, Options{})
	deadline := time.Now().Add(5 * time.Second)
	for {
		fine := fineSlackThreads(t)
		if len(fine) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads %v kept 1 ns timer slack after their pacing goroutines ended", fine)
		}
		runtime.Gosched()
	}
}

// A caller that schedules one shot at a time (the probe's trace) runs on
// the same pacing thread each time, rather than on a new thread each time.
func TestPacingThreadReused(t *testing.T) {
	tids := map[int]bool{}
	for range 20 {
		onPacingThread(func() { tids[unix.Gettid()] = true })
	}
	if len(tids) > 2 { // a second only if a stall outlasted pacingIdle
		t.Fatalf("20 one-shot jobs ran on %d threads", len(tids))
	}
}

// A paced run holds real-time priority while it waits ahead of its shots
// (when this process may), drops it when it cannot keep up, and leaves its
// pacing thread — which the next job may reuse — at the normal policy. The
// plan function runs on the dispatching thread, so it sees the policy the
// shot before left.
func TestPacingRealtimeWhileAhead(t *testing.T) {
	runtime.LockOSThread()
	leave, permitted := enterRealtime()
	leave()
	runtime.UnlockOSThread()
	srv := startBuiltin(t, "builtin:none")
	req := mustRequest(t, srv.URL)
	e := New(req, Options{}, func(*results.Result) {})
	ctx := e.Begin(t.Context())
	const spaced, flat = 10, 200
	policy := make([]int, spaced+flat)
	e.Schedule(ctx, spaced+flat, func(i int) Shot {
		policy[i] = schedPolicy(t)
		if i < spaced { // 2 ms apart: ahead
			return Shot{At: time.Duration(i) * 2 * time.Millisecond}
		}
		return Shot{At: spaced * 2 * time.Millisecond} // all due at once: behind
	})
	e.Wait()
	e.Finish()
	want := unix.SCHED_NORMAL
	if permitted {
		want = unix.SCHED_FIFO
	}
	// Real-time from the second wait ahead on; a stall of the test's
	// thread may make one wait look behind, so only the later half is held
	// to it.
	for i := spaced / 2; i < spaced; i++ {
		if policy[i] != want {
			t.Fatalf("shot %d (ahead): policy %d, want %d (real-time permitted: %v)", i, policy[i], want, permitted)
		}
	}
	for i := spaced + behindLimit + 2; i < spaced+flat; i++ {
		if policy[i] != unix.SCHED_NORMAL {
			t.Fatalf("shot %d, the %dth with nothing to wait for: policy %d", i, i-spaced, policy[i])
		}
	}
	onPacingThread(func() {
		if p := schedPolicy(t); p != unix.SCHED_NORMAL {
			t.Errorf("the next job on a pacing thread runs at policy %d", p)
		}
	})
}

// A pacing thread that held real-time priority and left it sleeps with its
// 1 ns timer slack again (the kernel resets a thread's slack when it
// leaves a real-time policy). The thread is retired after: its goroutine
// ends locked.
func TestLeavingRealtimeKeepsFineTimerSlack(t *testing.T) {
	slack := make(chan string, 1)
	go func() {
		lockPacingThread()
		leave, ok := enterRealtime()
		leave()
		if !ok {
			slack <- "not permitted"
			return
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(unix.Gettid()) + "/timerslack_ns")
		if err != nil {
			slack <- err.Error()
			return
		}
		slack <- strings.TrimSpace(string(b))
	}()
	switch s := <-slack; s {
	case "1":
	case "not permitted":
		t.Skip("this process may not use real-time priority")
	default:
		t.Fatalf("timer slack after leaving real-time priority: %s, want 1", s)
	}
}
