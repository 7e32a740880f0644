//go:build linux

package attack

import (
	"math/bits"
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

func schedPolicy(t *testing.T) int {
	t.Helper()
	p, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, 0, 0, 0)
	if e != 0 {
		t.Fatal(e)
	}
	return int(p)
}

// enterRealtime either switches the thread to SCHED_FIFO and back, or —
// without the privilege — changes nothing; the burst profile reports which.
func TestRealtimeReleaseRaisesAndRestores(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if p := schedPolicy(t); p != schedOther {
		t.Fatalf("test thread starts with policy %d", p)
	}
	leave, ok := enterRealtime()
	if ok {
		if p := schedPolicy(t); p != schedFIFO {
			t.Fatalf("enterRealtime reported ok, policy is %d", p)
		}
	} else if p := schedPolicy(t); p != schedOther {
		t.Fatalf("enterRealtime failed but changed the policy to %d", p)
	}
	leave()
	if p := schedPolicy(t); p != schedOther {
		t.Fatalf("policy after leave: %d", p)
	}

	rep, _, _ := runProfile(t, "builtin:none", Burst{K: 20}, Options{})
	if got := rep.Metrics.Burst.RealtimeRelease; got != ok {
		t.Fatalf("burst reports realtime_release %v, this process may use real-time priority: %v", got, ok)
	}
}

func affinity(t *testing.T) cpuMask {
	t.Helper()
	var m cpuMask
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m))); e != 0 {
		t.Fatal(e)
	}
	return m
}

func TestPinToCPUAndRestore(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old := affinity(t)
	n := 0
	for _, w := range old {
		n += bits.OnesCount64(w)
	}
	for i := range 3 {
		restore := pinToCPU(i)
		pinned := 0
		for _, w := range affinity(t) {
			pinned += bits.OnesCount64(w)
		}
		want := n // one CPU: nothing to choose, the mask stays
		if n >= 2 {
			want = 1
		}
		if pinned != want {
			t.Fatalf("pinToCPU(%d): %d CPUs allowed of %d", i, pinned, n)
		}
		restore()
		if affinity(t) != old {
			t.Fatalf("pinToCPU(%d): mask not restored", i)
		}
	}
}
