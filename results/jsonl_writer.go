package results

import (
	"bufio"
	"encoding/json"
	"io"
)

// jsonlWriter writes a stream as JSON Lines: one object a line.
type jsonlWriter struct {
	w    *bufio.Writer
	line []byte // reused for every result
}

func newJSONLWriter(w io.Writer) *jsonlWriter {
	return &jsonlWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// resultLine is a result's line in the file: appendResultLine writes it
// without reflection (streamline.go).
type resultLine struct {
	Type string `json:"type"`
	*Result
}

func (j *jsonlWriter) header(h StreamHeader) error { return j.object(h) }
func (j *jsonlWriter) end(e StreamEnd) error       { return j.object(e) }
func (j *jsonlWriter) flush() error                { return j.w.Flush() }

func (j *jsonlWriter) result(r *Result) error {
	j.line = appendResultLine(j.line[:0], r)
	_, err := j.w.Write(j.line)
	return err
}

func (j *jsonlWriter) object(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(b, '\n'))
	return err
}
