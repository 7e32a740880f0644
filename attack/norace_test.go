//go:build !race

package attack

// raceDetector: see race_test.go.
const raceDetector = false
