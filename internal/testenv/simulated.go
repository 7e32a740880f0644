package testenv

import (
	"strings"
	"testing"
)

// SimulatedPrefix begins the name of every test of probe and grade that
// probes the simulator (targets/sim: virtual time, no socket). Those tests
// cost CPU and no wall time, and replay exactly on a loaded machine, so CI
// runs them apart from the live ones — in the background at low priority
// (scripts/test: -run '^TestSim'), while the live tests, which mostly wait
// on real servers and real time, run in the foreground (-skip '^TestSim').
const SimulatedPrefix = "TestSim"

// Simulated marks t as a test that probes the simulator, and fails it when
// its name does not begin with SimulatedPrefix: a test named otherwise
// would run with the live tests, and one that mixes both would run in
// neither set whole. Split it, or rename it.
func Simulated(t testing.TB) {
	t.Helper()
	if !strings.HasPrefix(t.Name(), SimulatedPrefix) {
		t.Fatalf("%s probes the simulator, so its name must begin with %s (CI runs those tests apart from the live ones: internal/testenv/simulated.go)", t.Name(), SimulatedPrefix)
	}
}
