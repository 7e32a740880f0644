package report

import (
	"bytes"
	"errors"
	"io"
	"io/fs"

	"github.com/ratecheck/ratecheck/outfiles"
)

// Files are the report files a document is rendered into, by format; an
// empty path is not written.
type Files struct {
	HTML, JSON, JUnit string
}

// Any says whether any file is asked for.
func (f Files) Any() bool { return f.HTML != "" || f.JSON != "" || f.JUnit != "" }

// FileError is a report file that could not be rendered or written.
type FileError struct {
	Format string // "html", "json" or "junit"
	Path   string
	Err    error // why, without the path
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Write renders d into each file asked for, each written whole or not at
// all (outfiles.WriteAtomic), and calls wrote with each path written. A
// file that fails does not stop the others: the first failure is the
// error, a *FileError.
func (f Files) Write(d Document, wrote func(path string)) error {
	var first error
	for _, out := range []struct {
		format, path string
		render       func(io.Writer, Document) error
	}{{"html", f.HTML, WriteHTML}, {"json", f.JSON, WriteJSON}, {"junit", f.JUnit, WriteJUnit}} {
		if out.path == "" {
			continue
		}
		var buf bytes.Buffer
		err := out.render(&buf, d)
		if err == nil {
			err = outfiles.WriteAtomic(out.path, buf.Bytes())
		}
		if err == nil {
			wrote(out.path)
			continue
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already in the message
		}
		if first == nil {
			first = &FileError{Format: out.format, Path: out.path, Err: err}
		}
	}
	return first
}

// ResultsFiles are the results streams of the document's runs: where the
// runs are recorded, from which a report file can be rendered again.
func (d Document) ResultsFiles() []string {
	var streams []string
	for _, r := range d.Runs {
		if r.ResultsFile != "" {
			streams = append(streams, r.ResultsFile)
		}
	}
	return streams
}
