package results

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Digest is an attack's results stream read one result at a time into
// what its report shows: the counts and HDR percentiles of every request,
// and an even sample to draw. A run of any length is read in bounded
// memory, at the speed of its format's decoder (a probe's stream, a few
// thousand results its inference needs whole, is read by ReadStream).
type Digest struct {
	Header    StreamHeader
	End       *StreamEnd // nil when the run was interrupted
	Truncated bool       // the last record was cut mid-write
	Format    Format
	Summary   Summary
	// LastDone is the latest completion of any request.
	LastDone time.Duration
	// Sample holds the results (all of them up to MergeSample, else an
	// even random sample), in send order.
	Sample  []Result
	Sampled bool
}

// DigestStreamFile digests the results file at path (DigestStream).
func DigestStreamFile(path string) (*Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return DigestStream(f)
}

// DigestStream reads a results file, either format, into its Digest,
// keeping everything before a damaged tail as ReadStream does.
func DigestStream(r io.Reader) (*Digest, error) {
	sr, err := NewStreamReader(r)
	if err != nil {
		return nil, err
	}
	m, smp := NewMetrics(), newSampler()
	var res Result // reused: the sampler copies what it keeps
	for sr.setLean(!smp.wants()); sr.NextInto(&res); sr.setLean(!smp.wants()) {
		m.Add(&res)
		smp.add(&res)
	}
	if err := sr.Err(); err != nil {
		return nil, err
	}
	d := &Digest{Header: sr.Header, End: sr.End, Truncated: sr.Truncated, Format: sr.Format, Summary: m.Summary(), LastDone: m.LastDone}
	d.Sample, d.Sampled = smp.sample()
	return d, nil
}

// SampleNote is what a report says of a run drawn from a sample; "" when
// every request is drawn.
func SampleNote(sampled bool, drawn, requests int) string {
	if !sampled {
		return ""
	}
	return fmt.Sprintf("the charts draw an even sample of %d of the %d requests; the counts and percentiles are every request's", drawn, requests)
}
