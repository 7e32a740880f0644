package results

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/zstd"
)

// The compact stream on disk:
//
//	magic    8 bytes  compactMagic
//	version  1 byte   compactVersion
//	blocks, each:
//	  kind    1 byte   blockHeader, blockResults or blockEnd
//	  method  1 byte   methodStored or methodZstd
//	  count   uvarint  results in the block (0 for the others)
//	  rawLen  uvarint  the payload's length once decompressed
//	  encLen  uvarint  the payload's length as stored
//	  payload encLen bytes
//	  crc     4 bytes  CRC-32C of the block up to here, little-endian
//
// The header and end blocks hold the same JSON as the JSON Lines stream's
// first and last lines; a results block holds its results in the record
// encoding (compact_codec.go), compressed as one zstd frame. A block is written whole
// at each flush, so a run killed mid-write leaves every block before the
// last intact and the reader keeps them; the checksum tells a damaged block
// from a cut one.

// Block kinds: letters, so a hex dump reads.
const (
	blockHeader  = 'H'
	blockResults = 'R'
	blockEnd     = 'E'
)

// Payload methods. zstd, not the standard library's flate: on the record
// encoding (varints, little repetition a byte apart) it packs a little
// smaller and decompresses seven times faster (0.04 against 0.27 µs a
// result), which is most of what reading a stream costs.
const (
	methodStored = 0
	methodZstd   = 1
)

// compactBlockTarget is how many encoded bytes a results block gathers
// before it is sealed between flushes: big enough that zstd finds the
// run's repetition (at 20,000 results/s a 100 ms flush holds ~60 KB), small
// enough that a writer and a reader hold little.
const compactBlockTarget = 256 << 10

// compactMaxBlock is the largest payload (stored or decompressed) a reader
// accepts: the target and one outsized result above it, with room to
// spare. A length beyond it is damage, not a block, and no input makes a
// reader allocate more.
const compactMaxBlock = 16 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// compactWriter writes a stream's records as compact blocks to w.
type compactWriter struct {
	w     io.Writer
	enc   *recordEncoder
	raw   []byte // the open results block's records
	count int    // results in raw
	z     []byte // raw compressed
	block []byte // one block, assembled before it is written in one call
}

// zstdEncoder compresses every writer's blocks (EncodeAll is safe for
// concurrent use). The fastest level: the writer shares the CPU with the
// senders at full speed, and the slower levels gain little on varints. One
// block at a time and the smaller tables: the writer holds a few MB, not
// the tens the defaults take.
var zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
	zstd.WithLowerEncoderMem(true), zstd.WithWindowSize(compactBlockTarget*2)) // valid options: no error

func newCompactWriter(w io.Writer) *compactWriter {
	return &compactWriter{w: w, enc: newRecordEncoder()}
}

func (c *compactWriter) header(h StreamHeader) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if _, err := c.w.Write(append(append([]byte(nil), compactMagic...), compactVersion)); err != nil {
		return err
	}
	return c.writeBlock(blockHeader, methodStored, 0, b, b)
}

func (c *compactWriter) result(r *Result) error {
	c.raw = c.enc.appendResult(c.raw, r)
	c.count++
	if len(c.raw) >= compactBlockTarget {
		return c.flush()
	}
	return nil
}

// flush seals the open results block and writes it: everything added so
// far is then readable from the file.
func (c *compactWriter) flush() error {
	if c.count == 0 {
		return nil
	}
	c.z = zstdEncoder.EncodeAll(c.raw, c.z[:0])
	err := c.writeBlock(blockResults, methodZstd, c.count, c.raw, c.z)
	c.raw, c.count = c.raw[:0], 0
	return err
}

func (c *compactWriter) end(e StreamEnd) error {
	if err := c.flush(); err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return c.writeBlock(blockEnd, methodStored, 0, b, b)
}

func (c *compactWriter) writeBlock(kind, method byte, count int, raw, payload []byte) error {
	b := append(c.block[:0], kind, method)
	b = binary.AppendUvarint(b, uint64(count))
	b = binary.AppendUvarint(b, uint64(len(raw)))
	b = binary.AppendUvarint(b, uint64(len(payload)))
	b = append(b, payload...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	c.block = b
	_, err := c.w.Write(b)
	return err
}
