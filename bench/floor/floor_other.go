//go:build !linux

// Command floor is Linux-only: it measures a real-time nanosleep's wake-up
// lateness (see main.go).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "floor: Linux only (it measures SCHED_FIFO nanosleep wake-ups)")
	os.Exit(2)
}
