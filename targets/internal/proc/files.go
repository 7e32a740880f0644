package proc

import (
	"io"
	"os"
)

// ReadTail returns at most the last 16 KiB of path from offset on (a log a
// server appends to: offset skips what an earlier attempt wrote), "" when
// it cannot be read.
func ReadTail(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size()-offset > max {
		offset = fi.Size() - max
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
