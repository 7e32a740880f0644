// Package cmd holds ratecheck's cobra commands: flags, wiring and exit codes
// only. Everything that measures or decides lives in attack, probe, grade,
// report and targets (ARCHITECTURE.md).
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes, shared by every command.
const (
	ExitOK       = 0
	ExitFailed   = 1 // a check or expectation failed
	ExitUsage    = 2 // bad flags, arguments or config
	ExitUntested = 3 // the target could not be tested
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr marks err as the user's mistake: exit 2.
func usageErr(format string, a ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, a...)}
}

func exitWith(code int, err error) error { return &exitError{code: code, err: err} }

// version is set at build time with -ldflags "-X .../cmd.version=v1.2.3".
var version = "dev"

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "ratecheck",
		Short: "Load-test an HTTP rate limiter, infer its algorithm, grade its headers",
		Long: `ratecheck fires precisely timed attack profiles at an HTTP rate limiter,
infers which algorithm it really runs and with what parameters, and grades
its response contract (429, Retry-After, RateLimit headers).

Targets are any http(s) URL, or a built-in reference limiter such as
builtin:token_bucket?rate=10/s&burst=20.`,
		Example: `  ratecheck serve --algo token_bucket --rate 10/s --burst 20 --addr 127.0.0.1:8080
  ratecheck version`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: ExitUsage, err: fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(newVersionCmd(), newServeCmd(), newAttackCmd(), newProbeCmd(), newCompareCmd(), newDemoCmd(), newCheckCmd(), newReportCmd(), newKubeCmd())
	return root
}

// Execute runs the command line and returns the process exit code.
func Execute() int {
	return run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "ratecheck: %v\n", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Errors cobra raises itself (unknown command, wrong argument count)
	// are usage errors; every runtime error of ours is an exitError.
	return ExitUsage
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print ratecheck's version",
		Example: "  ratecheck version",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(c.OutOrStdout(), "ratecheck %s\n", version)
			return nil
		},
	}
}
