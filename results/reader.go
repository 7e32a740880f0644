package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// Recorded is a results file read back.
type Recorded struct {
	Header    StreamHeader
	Results   []Result
	End       *StreamEnd // nil when the run was interrupted
	Truncated bool       // the last record was cut mid-write
}

// ReadStreamFile reads the results file at path (ReadStream).
func ReadStreamFile(path string) (*Recorded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadStream(f)
}

// ReadStream reads a results file, JSON Lines or compact, keeping
// everything before a damaged tail (a run killed mid-write). It holds
// every result in memory; a StreamReader reads one at a time, and
// DigestStream aggregates an attack's stream in bounded memory.
func ReadStream(r io.Reader) (*Recorded, error) {
	sr, err := NewStreamReader(r)
	if err != nil {
		return nil, err
	}
	rec := &Recorded{Header: sr.Header}
	for {
		res, ok := sr.Next()
		if !ok {
			break
		}
		rec.Results = append(rec.Results, *res)
	}
	if err := sr.Err(); err != nil {
		return nil, err
	}
	rec.End, rec.Truncated = sr.End, sr.Truncated
	return rec, nil
}

// StreamReader reads a results file one result at a time, in constant
// memory: the header first, then Next until it reports false, then End
// (nil for an interrupted run), Truncated and Err. The format (JSON Lines
// or compact) is sniffed from the file's first bytes, whatever its name.
type StreamReader struct {
	Header    StreamHeader
	End       *StreamEnd
	Truncated bool // the last record was cut mid-write
	Format    Format

	src  recordSource
	err  error
	done bool
}

// record is what a source read next.
type record int

const (
	recordNone record = iota
	recordResult
	recordEnd
)

// recordSource is one format's reader. next reads a result into r, or
// returns the end record; io.EOF at the end of the file, errCut at a
// damaged tail, any other error for a file it cannot read on.
type recordSource interface {
	next(r *Result) (record, *StreamEnd, error)
}

// readerBuffer is the read-ahead: large reads keep a reader at the disk's
// speed (and JSON Lines' longest common line fits many times).
const readerBuffer = 256 << 10

// NewStreamReader reads the header, which must be the first record.
func NewStreamReader(r io.Reader) (*StreamReader, error) {
	br := bufio.NewReaderSize(r, readerBuffer)
	prefix, _ := br.Peek(len(compactMagic))
	s := &StreamReader{}
	if isCompact(prefix) {
		cr, err := newCompactReader(br)
		if err != nil {
			return nil, err
		}
		if err := cr.header(&s.Header); err != nil {
			return nil, err
		}
		s.src, s.Format = cr, Compact
	} else {
		jr := newJSONLReader(br)
		if err := jr.header(&s.Header); err != nil {
			return nil, err
		}
		s.src, s.Format = jr, JSONLines
	}
	if s.Header.Schema > StreamSchema {
		return nil, fmt.Errorf("results schema %d is newer than this ratecheck understands (%d): upgrade ratecheck", s.Header.Schema, StreamSchema)
	}
	return s, nil
}

// Next returns the next result; false at the end of the file, at its end
// record, at a damaged tail, or on an error (Err).
func (s *StreamReader) Next() (*Result, bool) {
	r := new(Result)
	if !s.NextInto(r) {
		return nil, false
	}
	return r, true
}

// NextInto reads the next result into r, replacing all of it, as Next
// does. It reuses r's Headers map (cleared), so a reader that aggregates
// allocates nothing per result; a caller that keeps a result read this way
// keeps a Clone of it.
func (s *StreamReader) NextInto(r *Result) bool {
	if s.done {
		return false
	}
	rec, end, err := s.src.next(r)
	switch {
	case err == nil && rec == recordResult:
		return true
	case err == nil && rec == recordEnd:
		if err := s.settleEnd(end); err != nil {
			s.err = err
		} else {
			s.End = end
		}
	case errors.Is(err, errCut):
		s.Truncated = true
	case err != io.EOF:
		s.err = err
	}
	s.done = true
	return false
}

// setLean has the next results read without their headers when lean (a
// compact stream skips filling the map; JSON Lines reads them anyway):
// for a reader that only counts.
func (s *StreamReader) setLean(lean bool) {
	if c, ok := s.src.(*compactReader); ok {
		c.dec.lean = lean
	}
}

// settleEnd decodes the metrics of an end record written before outcomes
// named their profile, by the header's.
func (s *StreamReader) settleEnd(end *StreamEnd) error {
	if o := end.Outcome; o != nil && o.Profile == "" {
		o.Profile = s.Header.Profile
		if err := o.decodeMetrics(o.Profile); err != nil {
			return fmt.Errorf("bad end record: %w", err)
		}
	}
	return nil
}

// Err is the first error reading the file (a damaged tail is not one).
func (s *StreamReader) Err() error { return s.err }
