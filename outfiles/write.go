package outfiles

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
