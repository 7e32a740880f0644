package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/launch"
)

// RefusedError is a run refused before it could test anything, for a
// reason the user must fix: a bad flag, spec or config, a budget that
// cannot hold the plan, a stream that cannot be created (cmd's exit 2).
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// UntestedError is a target that could not be tested: it could not be
// started here, or did not answer (cmd's exit 3).
type UntestedError struct{ Err error }

func (e *UntestedError) Error() string { return e.Err.Error() }
func (e *UntestedError) Unwrap() error { return e.Err }

// FailedError is a check that tested what it was asked and found it
// wrong: an expectation does not hold, a limiter was misidentified (cmd's
// exit 1).
type FailedError struct{ Err error }

func (e *FailedError) Error() string { return e.Err.Error() }
func (e *FailedError) Unwrap() error { return e.Err }

func refused(err error) error  { return &RefusedError{err} }
func untested(err error) error { return &UntestedError{err} }

// Refused says whether err refused the run (a *RefusedError).
func Refused(err error) bool {
	var re *RefusedError
	return errors.As(err, &re)
}

// Open opens the target spec (launch.OpenWith): a bad spec or config is
// a *RefusedError, a target that cannot be started here (nginx not
// installed, a Redis that does not start) an *UntestedError.
func Open(ctx context.Context, spec string, o launch.Options) (*launch.Target, error) {
	tgt, err := launch.OpenWith(ctx, spec, o)
	if err != nil {
		return nil, targetErr(err)
	}
	return tgt, nil
}

// targetErr is what a target that could not be opened is: refused for a
// bad spec or config, untested when it cannot be started here (nginx not
// installed, a Redis that does not start).
func targetErr(err error) error {
	var ue *launch.UsageError
	if errors.As(err, &ue) {
		return refused(err)
	}
	return untested(err)
}

// runConfigErr is the error of an attack run refused before sending: a
// results file that cannot be created says which flag moves it.
func runConfigErr(err error, o attack.Options) error {
	var ce *attack.ConfigError
	if errors.As(err, &ce) && ce.Field == "RunOptions.Out" {
		return refused(fmt.Errorf("%v (choose another place with %s)", err, name(o, "RunOptions.Out")))
	}
	return refused(err)
}

// name is how messages call an options field: as o.Names says, else the
// field itself.
func name(o attack.Options, field string) string {
	if o.Names != nil {
		if n := o.Names(field); n != "" {
			return n
		}
	}
	return field
}
