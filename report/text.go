// Package report renders results for people and machines: text tables for
// the terminal, the JSON document, JUnit XML and a self-contained HTML page.
// It decides nothing: runs arrive inferred (probe) and graded (grade), and
// an interrupted run is rendered as such, with no pass/fail verdict.
package report

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"

	"github.com/ratecheck/ratecheck/results"
)

// Table prints a two-or-more-column table with a header.
func Table(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewWriter(w)
	h := make([]any, len(header))
	for i, s := range header {
		h[i] = s
	}
	t.Header(h...)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

// Verdict prints the one-line conclusion under a table.
func Verdict(w io.Writer, verdict string, notes []string) {
	fmt.Fprintln(w, verdict)
	for _, n := range notes {
		fmt.Fprintln(w, "note: "+n)
	}
}

// AttackText is a live attack's answer: the banner when a signal cut it
// short (stopped is results.Interrupted; a budget's stop is in the
// notes), the profile's table, the verdict and its notes.
func AttackText(w io.Writer, rep results.Report, stopped string) error {
	if stopped == results.Interrupted {
		Interrupted(w, stopped)
	}
	if err := Table(w, []string{rep.Profile, "value"}, rep.Rows); err != nil {
		return err
	}
	Verdict(w, rep.Verdict, rep.Notes)
	return nil
}

// Interrupted is the banner at the top of a cut-short run's text: what it
// shows is partial, and no pass/fail verdict follows.
func Interrupted(w io.Writer, why string) {
	if why == "" || why == "interrupted" {
		fmt.Fprintf(w, "%s\n\n", interruptedBanner)
		return
	}
	fmt.Fprintf(w, "%s (%s)\n\n", interruptedBanner, why)
}
