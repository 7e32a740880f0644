package results

import (
	"bytes"
	"path/filepath"
	"strings"
)

// Format is how a results stream is encoded on disk. Writers pick it from
// the file's name (FormatOf); readers sniff it from the file's first bytes
// (a renamed or piped file reads all the same).
type Format int

const (
	// JSONLines is one JSON object a line (README "Results stream"): what
	// jq and a text editor read.
	JSONLines Format = iota
	// Compact is the binary stream (compact_writer.go): blocks of
	// delta-encoded, interned, zstd-compressed results, about a tenth of
	// JSON Lines' size, read several times faster.
	Compact
)

// CompactExt is the extension that makes a stream compact: "ratecheck
// stream". Any other name is written as JSON Lines.
const CompactExt = ".rcs"

func (f Format) String() string {
	if f == Compact {
		return "compact"
	}
	return "JSON Lines"
}

// FormatOf is the format a stream written to path takes: Compact for a
// name ending in .rcs (any case), JSON Lines otherwise (.jsonl,
// /dev/stdout, ...).
func FormatOf(path string) Format {
	if strings.EqualFold(filepath.Ext(path), CompactExt) {
		return Compact
	}
	return JSONLines
}

// compactMagic opens every compact stream. Like PNG's signature it is not
// text: its high first byte and CR LF SUB LF catch a file mangled by a
// text-mode transfer, and no JSON Lines file (which starts with '{' or
// white space) can begin with it.
var compactMagic = []byte("\x89RCS\r\n\x1a\n")

// compactVersion follows the magic; a reader refuses a newer one.
const compactVersion = 1

// isCompact reports whether a stream that begins with prefix is compact.
func isCompact(prefix []byte) bool { return bytes.HasPrefix(prefix, compactMagic) }
