package results

import "io"

// ConvertToJSONLines writes the stream r holds (either format) to w as
// JSON Lines: the lines a JSON Lines stream of the same run holds (the
// header, every result, the end record when there is one). A damaged tail
// ends the output where the readable results do; it is reported by the
// returned reader's Truncated, and an error by err.
func ConvertToJSONLines(w io.Writer, r io.Reader) (*StreamReader, error) {
	sr, err := NewStreamReader(r)
	if err != nil {
		return nil, err
	}
	jw := newJSONLWriter(w)
	if err := jw.header(sr.Header); err != nil {
		return sr, err
	}
	var res Result
	for sr.NextInto(&res) {
		if err := jw.result(&res); err != nil {
			return sr, err
		}
	}
	if err := sr.Err(); err != nil {
		jw.flush() // what was read stands
		return sr, err
	}
	if sr.End != nil {
		if err := jw.end(*sr.End); err != nil {
			return sr, err
		}
	}
	return sr, jw.flush()
}
