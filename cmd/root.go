// Package cmd holds ratecheck's cobra commands: flags, wiring and exit codes
// only. Everything that measures or decides lives in attack, probe, grade,
// report and targets (ARCHITECTURE.md).
package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/runner"
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

// usageIf marks err, if any, as the user's mistake: exit 2.
func usageIf(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: ExitUsage, err: err}
}

// exitOf gives a runner's error its exit code: a run refused before it
// could test anything 2, what was tested and found wrong 1, a target that
// could not be tested 3.
func exitOf(err error) error {
	var re *runner.RefusedError
	var fe *runner.FailedError
	var ue *runner.UntestedError
	switch {
	case errors.As(err, &re):
		return &exitError{code: ExitUsage, err: err}
	case errors.As(err, &fe):
		return &exitError{code: ExitFailed, err: err}
	case errors.As(err, &ue):
		return &exitError{code: ExitUntested, err: err}
	}
	return err
}

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
		// Every command: a report file that cannot be written, or would
		// overwrite an input or another report, is found before anything
		// is read or sent, not after a long run.
		PersistentPreRunE: checkOutputFiles,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: ExitUsage, err: fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(newVersionCmd(), newServeCmd(), newAttackCmd(), newProbeCmd(), newCompareCmd(), newDemoCmd(), newCheckCmd(), newReportCmd(), newKubeCmd(), newSelftestCmd())
	strictCompletion(root)
	strictHelp(root)
	return root
}

// strictHelp makes 'ratecheck help TOPIC' exit 2 for a topic that is no
// command: left alone, cobra prints "Unknown help topic" and the usage,
// and exits 0.
func strictHelp(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	for _, h := range root.Commands() {
		if h.Name() != "help" || h.Run == nil {
			continue
		}
		show := h.Run
		h.Run = nil
		h.RunE = func(h *cobra.Command, args []string) error {
			if len(args) > 0 {
				if c, _, err := root.Find(args); c == nil || err != nil {
					return unknownTopic(root, args)
				}
			}
			show(h, args)
			return nil
		}
	}
}

func unknownTopic(root *cobra.Command, args []string) error {
	topic := strings.Join(args, " ")
	if sugg := root.SuggestionsFor(args[0]); len(sugg) > 0 {
		return usageErr("unknown help topic %q: did you mean %s? (see 'ratecheck help')", topic, strings.Join(sugg, " or "))
	}
	return usageErr("unknown help topic %q: see 'ratecheck help' for the commands", topic)
}

// strictCompletion makes cobra's completion command refuse a shell it has
// no script for: left alone, 'completion tcsh' prints the help and exits 0,
// and a CI step that pipes it into a file succeeds with nothing usable.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sub := range c.Commands() {
			shells = append(shells, sub.Name())
		}
		list := strings.Join(shells, ", ")
		c.Args = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("completion needs a shell: one of %s (e.g. '%s bash')", list, c.CommandPath())
			}
			return usageErr("no completion script for shell %q: use one of %s", args[0], list)
		}
		// Runnable, so cobra checks Args instead of printing the help.
		c.RunE = func(*cobra.Command, []string) error { return nil }
		c.Example = `  ratecheck completion bash > /etc/bash_completion.d/ratecheck
  ratecheck completion zsh > "${fpath[1]}/_ratecheck"
  ratecheck completion fish > ~/.config/fish/completions/ratecheck.fish
  source <(ratecheck completion bash)    # this shell only`
	}
}

// Execute runs the command line and returns the process exit code.
func Execute() int {
	return Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
}

// Run runs the command line args (without the program's name) writing to
// stdout and stderr, and returns the exit code: Execute's body, for the
// test-only modules under testdata/ that run the commands in process.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "ratecheck: %s\n", oneLine(err))
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Errors cobra raises itself (unknown command, wrong argument count)
	// are usage errors; every runtime error of ours is an exitError.
	return ExitUsage
}

// oneLine is err's message on one line: cobra puts its "Did you mean
// this?" suggestions for a mistyped command on lines of their own.
func oneLine(err error) string {
	msg := err.Error()
	if head, sugg, ok := strings.Cut(msg, "\n\nDid you mean this?\n"); ok {
		return fmt.Sprintf("%s: did you mean %s? (see 'ratecheck --help')", head, strings.Join(strings.Fields(sugg), " or "))
	}
	if strings.HasPrefix(msg, "unknown command ") && !strings.Contains(msg, "\n") {
		return msg + " (see 'ratecheck --help' for the commands)"
	}
	// errors.Join and the like: one line, the parts kept apart.
	return strings.Join(strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' }), "; ")
}

// noArgs is cobra.NoArgs with a message that says the command takes none
// (cobra's own reads "unknown command").
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr("%s takes no arguments (got %q); see '%s --help'", c.Name(), strings.Join(args, " "), c.CommandPath())
	}
	return nil
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print ratecheck's version",
		Example: "  ratecheck version",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(c.OutOrStdout(), "ratecheck %s\n", version)
			return nil
		},
	}
}

// interruptible is the command's context, cancelled by SIGINT or SIGTERM:
// a traffic command then stops sending and reports what it measured.
func interruptible(c *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
}

// printJSON writes v as indented JSON: every command's -o json.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
