package outfiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrIsDir says a path given for a file names a directory.
var ErrIsDir = errors.New("is a directory")

// CanCreate says whether a file can be created at path, by creating and
// removing a temporary file beside it: before a long run, not after. The
// error is ErrIsDir for a directory, else why the file cannot be created
// (a missing directory, no permission), without the path.
func CanCreate(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return ErrIsDir
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err // the caller names the path
		}
		return err
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// WriteAtomic writes data to path through a temporary file in the same
// directory, so a reader never sees half a report.
func WriteAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// WriteJSON writes v to path as indented JSON.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// WriteError is the error of a report file that could not be written once
// the run was over (its directory removed meanwhile, a full disk), flag
// being the one that names it. The run itself is safe in its results
// streams, from which 'ratecheck report' renders the file again: with
// streams, the message says so, and it claims nothing about what was or
// was not sent.
func WriteError(flag, path string, err error, streams []string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is already in the message
	}
	if len(streams) == 0 {
		return fmt.Errorf("%s %s could not be written: %v", flag, path, err)
	}
	return fmt.Errorf("%s %s could not be written: %v; the run is recorded in %s: render the file again with 'ratecheck report %s %s %s'",
		flag, path, err, strings.Join(streams, ", "), strings.Join(streams, " "), flag, path)
}
