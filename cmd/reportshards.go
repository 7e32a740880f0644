package cmd

import (
	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
)

// mergeIfSharded merges the streams when they are shards of a run (any
// of them is): nil, nil when none is. Streams that do not make exactly
// one run are exit 2, naming the files or the missing shards.
func mergeIfSharded(paths []string) (*results.Merged, error) {
	hs := make([]results.StreamHeader, len(paths))
	sharded := false
	for i, p := range paths {
		h, err := results.PeekHeader(p)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		hs[i], sharded = h, sharded || h.Shard != nil
	}
	if !sharded {
		return nil, nil
	}
	if err := results.CheckShards(paths, hs); err != nil {
		return nil, usageErr("%v", err)
	}
	// What remains to fail is reading a file: the user's to fix as well.
	m, err := results.MergeShards(paths)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return m, nil
}

// renderMerged renders the one run the shards make, as report does any
// attack's stream.
func renderMerged(c *cobra.Command, output string, expects bool, m *results.Merged) error {
	if expects {
		return usageErr("--expect: the streams hold an attack (%s), not a probe: there is nothing to compare expectations with", m.Header.Profile)
	}
	doc := report.NewDocument(version, m.Header.Command, m.Header.Profile, report.MergedRun(m))
	w := c.OutOrStdout()
	if output == "json" {
		if err := report.WriteJSON(w, doc); err != nil {
			return err
		}
	} else {
		report.RunText(w, &doc.Runs[0])
	}
	if err := writeOutputs(c, doc); err != nil {
		return err
	}
	return reportExit(doc.Runs)
}
