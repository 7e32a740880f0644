package results

import (
	"bufio"
	"encoding/json"
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
	Truncated bool       // the last line was cut mid-write
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

// ReadStream reads a results file, keeping everything before a damaged
// tail (a run killed mid-write). It holds every result in memory; a
// StreamReader reads one at a time.
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
// (nil for an interrupted run), Truncated and Err.
type StreamReader struct {
	Header    StreamHeader
	End       *StreamEnd
	Truncated bool // the last line was cut mid-write

	sc   *bufio.Scanner
	line int
	err  error
}

// NewStreamReader reads the header, which must be the first record.
func NewStreamReader(r io.Reader) (*StreamReader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	s := &StreamReader{sc: sc}
	for sc.Scan() {
		s.line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &probe); err != nil {
			return nil, fmt.Errorf("line %d: not a ratecheck results file: %w", s.line, err)
		}
		if probe.Type != "header" {
			return nil, fmt.Errorf("line %d: not a ratecheck results file (no header record)", s.line)
		}
		if err := json.Unmarshal(b, &s.Header); err != nil {
			return nil, fmt.Errorf("line %d: bad header: %w", s.line, err)
		}
		if s.Header.Schema > StreamSchema {
			return nil, fmt.Errorf("results schema %d is newer than this ratecheck understands (%d): upgrade ratecheck", s.Header.Schema, StreamSchema)
		}
		return s, nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("not a ratecheck results file: no header record")
}

// Next returns the next result; false at the end of the file, at its end
// record, at a damaged tail, or on an error (Err).
func (s *StreamReader) Next() (*Result, bool) {
	for s.err == nil && s.End == nil && !s.Truncated && s.sc.Scan() {
		s.line++
		b := s.sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &probe); err != nil {
			s.Truncated = true
			return nil, false
		}
		switch probe.Type {
		case "result":
			var res Result
			if err := json.Unmarshal(b, &res); err != nil {
				s.err = fmt.Errorf("line %d: bad result: %w", s.line, err)
				return nil, false
			}
			return &res, true
		case "end":
			end := &StreamEnd{}
			if err := json.Unmarshal(b, end); err != nil {
				s.err = fmt.Errorf("line %d: bad end record: %w", s.line, err)
				return nil, false
			}
			if o := end.Outcome; o != nil && o.Profile == "" {
				o.Profile = s.Header.Profile
				if err := o.decodeMetrics(o.Profile); err != nil {
					s.err = fmt.Errorf("line %d: bad end record: %w", s.line, err)
					return nil, false
				}
			}
			s.End = end
			return nil, false
		}
	}
	if s.err == nil {
		s.err = s.sc.Err()
	}
	return nil, false
}

// Err is the first error reading the file (a damaged tail is not one).
func (s *StreamReader) Err() error { return s.err }
