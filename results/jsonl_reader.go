package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jsonlReader reads a JSON Lines stream's records line by line.
type jsonlReader struct {
	sc   *bufio.Scanner
	line int
}

// maxLine is the longest line a reader takes: far above any result (a
// kept body is 1 KiB) or end record.
const maxLine = 16 << 20

func newJSONLReader(r io.Reader) *jsonlReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &jsonlReader{sc: sc}
}

// header reads the header line, which must be the first non-empty one.
func (j *jsonlReader) header(h *StreamHeader) error {
	for j.sc.Scan() {
		j.line++
		b := j.sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var probe struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(b, &probe); err != nil {
			return fmt.Errorf("line %d: not a ratecheck results file: %w", j.line, err)
		}
		if probe.Type != "header" {
			return fmt.Errorf("line %d: not a ratecheck results file (no header record)", j.line)
		}
		if err := json.Unmarshal(b, h); err != nil {
			return fmt.Errorf("line %d: bad header: %w", j.line, err)
		}
		return nil
	}
	if err := j.sc.Err(); err != nil {
		return err
	}
	return errors.New("not a ratecheck results file: no header record")
}

// resultPrefix opens every result line this ratecheck writes
// (appendResultLine): such a line needs no first pass to learn its type.
var resultPrefix = []byte(`{"type":"result",`)

// next reads the next result line into r. A line that is not JSON is the
// damaged tail of a run killed mid-write (errCut): the lines before it
// stand.
func (j *jsonlReader) next(r *Result) (record, *StreamEnd, error) {
	for j.sc.Scan() {
		j.line++
		b := j.sc.Bytes()
		if len(b) == 0 {
			continue
		}
		typ := "result"
		if !bytes.HasPrefix(b, resultPrefix) {
			var probe struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(b, &probe); err != nil {
				return recordNone, nil, errCut
			}
			typ = probe.Type
		}
		switch typ {
		case "result":
			*r = Result{}
			if err := json.Unmarshal(b, r); err != nil {
				var syn *json.SyntaxError
				if errors.As(err, &syn) {
					return recordNone, nil, errCut
				}
				return recordNone, nil, fmt.Errorf("line %d: bad result: %w", j.line, err)
			}
			return recordResult, nil, nil
		case "end":
			end := &StreamEnd{}
			if err := json.Unmarshal(b, end); err != nil {
				return recordNone, nil, fmt.Errorf("line %d: bad end record: %w", j.line, err)
			}
			return recordEnd, end, nil
		}
	}
	if err := j.sc.Err(); err != nil {
		return recordNone, nil, err
	}
	return recordNone, nil, io.EOF
}
