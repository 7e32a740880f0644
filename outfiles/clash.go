package outfiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// File is a file a command reads or writes, with the flag (or argument)
// that names it, so that a refusal can say which two collide.
type File struct {
	Flag string // "--html", "the RESULTS argument"
	What string // "the HTML report", "the results stream"
	Path string
	Out  bool // the command writes it
}

// Clash is an error when a file the command writes is the same file as one
// listed before it (an input, the results stream, another report): writing
// it would destroy the other. It names both flags and the path.
func Clash(files []File) error {
	for j, w := range files {
		if !w.Out {
			continue
		}
		for _, o := range files[:j] {
			if Same(o.Path, w.Path) {
				return fmt.Errorf("%s %s is the same file as %s %s: %s would overwrite %s; give %s another path",
					w.Flag, w.Path, o.Flag, o.Path, w.What, o.What, w.Flag)
			}
		}
	}
	return nil
}

// Same says whether a and b name one file: the same cleaned absolute path
// (its directory's symlinks resolved, for a file not yet written), or
// os.SameFile when both exist (a symlink, a hard link).
func Same(a, b string) bool {
	if canonicalPath(a) == canonicalPath(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

func canonicalPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// CheckReports refuses, before anything is read or sent, a report file
// that is an input or another report of the same run (Clash), or that
// names no place a file can be created in: a missing directory, a
// directory, one without permission (CanCreate).
func CheckReports(inputs, reports []File) error {
	if err := Clash(append(inputs, reports...)); err != nil {
		return err
	}
	for _, f := range reports {
		switch err := CanCreate(f.Path); {
		case errors.Is(err, ErrIsDir):
			return fmt.Errorf("%s %s is a directory: name a file, e.g. %s", f.Flag, f.Path, filepath.Join(f.Path, "report."+strings.TrimPrefix(f.Flag, "--")))
		case err != nil:
			return fmt.Errorf("%s %s cannot be written: %v (choose another place)", f.Flag, f.Path, err)
		}
	}
	return nil
}
