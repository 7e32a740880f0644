package proc

import (
	"errors"
	"net"
)

// FreePort asks the kernel for a free loopback port. Another process may
// take it before the server binds it; BindRetry then tries another.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

// BindAttempts is how many ports BindRetry tries.
const BindAttempts = 3

// ErrAddrInUse is what a launch returns (wrapped, or as a *StartError with
// InUse) when the port it was given turned out to be taken.
var ErrAddrInUse = errors.New("address already in use")

// BindRetry calls try with a port from pick until it succeeds, fails for a
// reason other than ErrAddrInUse, or BindAttempts ports are spent; it
// returns the port that worked. attempt counts from 1.
func BindRetry(pick func() (int, error), try func(attempt, port int) error) (int, error) {
	for attempt := 1; ; attempt++ {
		port, err := pick()
		if err != nil {
			return 0, err
		}
		err = try(attempt, port)
		if err == nil {
			return port, nil
		}
		if !errors.Is(err, ErrAddrInUse) || attempt >= BindAttempts {
			return 0, err
		}
	}
}

// StartError is a server that did not come up: Msg says how, Detail is
// what it wrote (translated to the user's file and line), InUse that its
// port was taken (errors.Is(err, ErrAddrInUse)).
type StartError struct {
	Msg    string
	InUse  bool
	Detail string
}

func (e *StartError) Error() string {
	if e.Detail == "" {
		return e.Msg
	}
	return e.Msg + ": " + e.Detail
}

func (e *StartError) Is(target error) bool { return target == ErrAddrInUse && e.InUse }
