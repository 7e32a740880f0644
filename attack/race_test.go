//go:build race

package attack

// raceDetector: the race detector slows every goroutine start and channel
// operation several times over, so a bound on how close together a
// server's handlers start measures the detector, not the engine: the
// tests that hold such a bound run it only without (scripts/test runs
// them once more without the detector).
const raceDetector = true
