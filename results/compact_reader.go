package results

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// compactReader reads the blocks of a compact stream (compact_writer.go)
// one result at a time, holding one block.
type compactReader struct {
	r      *bufio.Reader
	off    int64 // bytes consumed: the offset of the next block
	dec    recordDecoder
	stored []byte // the block as stored
	raw    []byte // its payload decompressed
	c      cursor // the results block being read
	left   int    // its results not yet read
	first  int    // the number (from 1) of its first result
	at     int64  // its offset
	read   int    // results read so far
}

// errCut is a block cut short by the end of the file: the run stopped
// mid-write.
var errCut = errors.New("cut short")

// A CorruptError is a compact stream damaged before its last block: what
// follows cannot be trusted, so the reader stops with the offset and the
// result number where it happened.
type CorruptError struct {
	Offset int64 // of the damaged block
	Result int   // the number (from 1) of the first result it would hold
	Why    string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("corrupt compact stream at byte %d (from result #%d): %s", e.Offset, e.Result, e.Why)
}

func newCompactReader(br *bufio.Reader) (*compactReader, error) {
	head := make([]byte, len(compactMagic)+1)
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, errors.New("not a ratecheck results file: a compact stream cut before its header record")
	}
	if v := head[len(compactMagic)]; v > compactVersion {
		return nil, fmt.Errorf("compact stream version %d is newer than this ratecheck understands (%d): upgrade ratecheck", v, compactVersion)
	}
	return &compactReader{r: br, off: int64(len(head))}, nil
}

// header reads the header block, which must come first.
func (c *compactReader) header(h *StreamHeader) error {
	kind, _, payload, err := c.block()
	switch {
	case errors.Is(err, errCut) || errors.Is(err, io.EOF):
		return errors.New("not a ratecheck results file: a compact stream cut before its header record")
	case err != nil:
		return err
	case kind != blockHeader:
		return &CorruptError{Offset: len64(compactMagic) + 1, Result: 1, Why: "the first block is no header record"}
	}
	if err := json.Unmarshal(payload, h); err != nil {
		return fmt.Errorf("bad header: %w", err)
	}
	return nil
}

func len64(b []byte) int64 { return int64(len(b)) }

// next reads the next result into r (record), or reports the end record,
// the end of the file (done: a clean end between blocks) or a cut tail
// (errCut).
func (c *compactReader) next(r *Result) (record, *StreamEnd, error) {
	for c.left == 0 {
		at := c.off
		kind, count, payload, err := c.block()
		if err != nil {
			return recordNone, nil, err
		}
		switch kind {
		case blockResults:
			if count == 0 {
				return recordNone, nil, &CorruptError{Offset: at, Result: c.read + 1, Why: "a results block with no result"}
			}
			c.c, c.left, c.first, c.at = cursor{b: payload}, count, c.read+1, at
		case blockEnd:
			end := &StreamEnd{}
			if err := json.Unmarshal(payload, end); err != nil {
				return recordNone, nil, &CorruptError{Offset: at, Result: c.read + 1, Why: "bad end record: " + err.Error()}
			}
			return recordEnd, end, nil
		default:
			return recordNone, nil, &CorruptError{Offset: at, Result: c.read + 1, Why: fmt.Sprintf("unexpected block %q", kind)}
		}
	}
	if err := c.dec.decode(&c.c, r); err != nil {
		return recordNone, nil, &CorruptError{Offset: c.at, Result: c.read + 1, Why: err.Error()}
	}
	c.left--
	c.read++
	switch {
	case c.left == 0 && len(c.c.b) != 0:
		return recordNone, nil, &CorruptError{Offset: c.at, Result: c.first, Why: "bytes left over after the block's results"}
	case c.left > 0 && len(c.c.b) == 0:
		return recordNone, nil, &CorruptError{Offset: c.at, Result: c.read + 1, Why: "the block ends before its results do"}
	}
	return recordResult, nil, nil
}

// block reads one whole block and checks it: io.EOF at a clean end, errCut
// when the file ends inside it (or inside the last block, damaged: a run
// killed mid-write), a *CorruptError for damage with more file after it.
func (c *compactReader) block() (kind byte, count int, payload []byte, err error) {
	at := c.off
	var hdr [2 + 3*binary.MaxVarintLen64]byte
	n := 0
	readByte := func() (byte, error) {
		b, err := c.r.ReadByte()
		if err == nil {
			hdr[n] = b
			n++
		}
		return b, err
	}
	uvarint := func() (uint64, error) {
		var v uint64
		for shift := uint(0); ; shift += 7 {
			b, err := readByte()
			if err != nil {
				return 0, err
			}
			if shift == 63 && b > 1 {
				return 0, errors.New("length overflows")
			}
			v |= uint64(b&0x7f) << shift
			if b < 0x80 {
				return v, nil
			}
		}
	}
	corrupt := func(why string) error { return c.damaged(at, why) }
	kind, err = readByte()
	if err != nil {
		if err == io.EOF {
			return 0, 0, nil, io.EOF
		}
		return 0, 0, nil, err
	}
	method, err := readByte()
	if err != nil {
		return 0, 0, nil, c.cut(err)
	}
	var lens [3]uint64
	for i := range lens {
		if lens[i], err = uvarint(); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return 0, 0, nil, errCut
			}
			return 0, 0, nil, corrupt(err.Error())
		}
	}
	cnt, rawLen, encLen := lens[0], lens[1], lens[2]
	if rawLen > compactMaxBlock || encLen > compactMaxBlock || cnt > rawLen {
		return 0, 0, nil, corrupt(fmt.Sprintf("a block of %d bytes (%d stored) holding %d results is beyond any this ratecheck writes", rawLen, encLen, cnt))
	}
	if c.stored, err = readN(c.r, c.stored, int(encLen)); err != nil {
		return 0, 0, nil, c.cut(err)
	}
	var sum [4]byte
	if _, err := io.ReadFull(c.r, sum[:]); err != nil {
		return 0, 0, nil, c.cut(err)
	}
	c.off += int64(n) + int64(encLen) + 4
	crc := crc32.Update(crc32.Checksum(hdr[:n], crcTable), crcTable, c.stored)
	if crc != binary.LittleEndian.Uint32(sum[:]) {
		return 0, 0, nil, corrupt("checksum mismatch")
	}
	switch method {
	case methodStored:
		if rawLen != encLen {
			return 0, 0, nil, corrupt("a stored block's lengths differ")
		}
		payload = c.stored
	case methodZstd:
		if payload, err = c.decompress(int(rawLen)); err != nil {
			return 0, 0, nil, corrupt(err.Error())
		}
	default:
		return 0, 0, nil, corrupt(fmt.Sprintf("unknown compression method %d", method))
	}
	return kind, int(cnt), payload, nil
}

// cut is a block the file ends inside; other read errors are the disk's.
func (c *compactReader) cut(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errCut
	}
	return err
}

// damaged is a damaged block at offset at: the cut tail of a run killed
// mid-write when nothing follows it, else a *CorruptError.
func (c *compactReader) damaged(at int64, why string) error {
	if _, err := c.r.Peek(1); err == io.EOF {
		return errCut
	}
	return &CorruptError{Offset: at, Result: c.read + 1, Why: why}
}

// zstdDecoder decompresses every reader's blocks (DecodeAll is safe for
// concurrent use), refusing a frame that claims more than a block can
// hold: damage costs no memory.
var zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(compactMaxBlock),
	zstd.WithDecoderLowmem(true)) // valid options: no error

// decompress decompresses the stored block, which must hold n bytes.
func (c *compactReader) decompress(n int) ([]byte, error) {
	var err error
	if c.raw, err = zstdDecoder.DecodeAll(c.stored, c.raw[:0]); err != nil {
		return nil, err
	}
	if len(c.raw) != n {
		return nil, fmt.Errorf("payload of %d bytes, not the %d its block says", len(c.raw), n)
	}
	return c.raw, nil
}

// readN reads n bytes into buf, growing it as they arrive (at most 1 MiB
// ahead), so a damaged length costs no more memory than the file holds.
func readN(r io.Reader, buf []byte, n int) ([]byte, error) {
	const step = 1 << 20
	buf = buf[:0]
	for len(buf) < n {
		k := min(n-len(buf), step)
		buf = slices.Grow(buf, k)
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}
