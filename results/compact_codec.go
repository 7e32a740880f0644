package results

import (
	"encoding/binary"
	"errors"
	"slices"
	"time"
)

// The compact stream's record encoding: one result as a few varints. Each
// record is written against the state the ones before it left (the
// previous result's times, sequence number, connection and status, and two
// tables of strings seen lately), so a run's repetition costs a byte or
// two instead of a JSON key and value:
//
//	flags     uvarint: which optional fields follow (flag* below)
//	seq       varint:  Seq − the previous Seq (results complete out of order)
//	phase     str      (flagPhase)
//	conn      varint:  Conn − the previous Conn recorded (flagConn)
//	scheduled varint:  Scheduled − the previous Scheduled
//	sent      varint:  Sent − Scheduled (the lateness)
//	firstbyte varint:  FirstByte − Sent (flagFirstByte; absent: 0)
//	done      varint:  Done − FirstByte, or − Sent without one
//	status    varint:  Status − the previous Status recorded (flagStatus)
//	error     str      (flagError)
//	headers   (flagHeaders) uvarint count then count × (name str, value
//	          val) by name, or uvarint 0 and a val for each of the names
//	          in the last record's header slots when the names are those

//	body      str      (flagBody)
//	client    varint   (flagClient)
//	key       str      (flagKey)
//	source    str      (flagSource)
//
// varints are zigzag (binary.AppendVarint) and wrap in int64, so any
// difference, negative or overflowing, round-trips exactly. A str is
// uvarint 0 then a length and bytes (a literal, not remembered), 1 then a
// length and bytes (a literal the table remembers in its next slot), or
// k+2 (the string in slot k). Phase, key, source, error, body and header
// names share one table; header values have their own, so the values that
// change with every answer (remaining counts) do not push the names out.
// A val is a str whose codes are one higher, 0 meaning "the value this
// header name had last" (Date and the policy change rarely).

// Record flags. The fields of a run at full speed (a phase, a connection,
// a status, headers) come first so their flags fit one varint byte.
const (
	flagPhase = 1 << iota
	flagConn
	flagFirstByte
	flagStatus
	flagHeaders
	flagBody
	flagError
	flagClient
	flagKey
	flagSource
)

// internSlots is each table's size. Enough for every phase, key, header
// name and canned body of a run; the values of counters cycle through it
// round robin, so a reader holds at most internSlots × maxInterned bytes
// per table whatever the run's length.
const internSlots = 1024

// maxInterned is the longest string a table remembers: a whole kept body
// (BodyKeep) fits; longer header values or errors are written as literals
// each time, which bounds a reader's memory.
const maxInterned = 2 * BodyKeep

// String reference codes (above).
const (
	strLiteral   = 0 // a literal the tables do not remember
	strRemember  = 1 // a literal remembered in the table's next slot
	strSlotFirst = 2 // slot k is code k+strSlotFirst
)

// internWriter is the writer's side of a table: each string's slot, and
// the next slot to fill (round robin, the oldest entry evicted).
type internWriter struct {
	slot  map[string]int
	slots []string
	next  int
}

func newInternWriter() *internWriter {
	return &internWriter{slot: make(map[string]int, internSlots), slots: make([]string, 0, internSlots)}
}

// appendStr appends s's reference, remembering s when it is new, with
// its codes shifted up by base (a val's "same" code below them). slot is
// where s is (-1: nowhere) and fresh whether it was put there now.
func (t *internWriter) appendStr(b []byte, s string, base uint64) (_ []byte, slot int, fresh bool) {
	if k, ok := t.slot[s]; ok {
		return binary.AppendUvarint(b, base+uint64(k+strSlotFirst)), k, false
	}
	slot = -1
	if len(s) > maxInterned {
		b = binary.AppendUvarint(b, base+strLiteral)
	} else {
		b = binary.AppendUvarint(b, base+strRemember)
		slot, fresh = t.remember(s), true
	}
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...), slot, fresh
}

func (t *internWriter) remember(s string) int {
	if len(t.slots) < internSlots {
		t.slot[s] = len(t.slots)
		t.slots = append(t.slots, s)
		return len(t.slots) - 1
	}
	k := t.next
	delete(t.slot, t.slots[k])
	t.slots[k] = s
	t.slot[s] = k
	t.next = (t.next + 1) % internSlots
	return k
}

// internReader mirrors internWriter: the same strings in the same slots.
type internReader struct {
	slots []string
	next  int
}

func (t *internReader) remember(s string) int {
	if len(t.slots) < internSlots {
		t.slots = append(t.slots, s)
		return len(t.slots) - 1
	}
	k := t.next
	t.slots[k] = s
	t.next = (t.next + 1) % internSlots
	return k
}

// recordState is what the next record is written against; writer and
// reader keep the same.
type recordState struct {
	seq, conn, scheduled, status int64
	// hdrSlots are the name slots of the last record's headers, by name.
	hdrSlots []int
	// last is the value each header name (by its slot) had last; a slot
	// that takes a new name forgets it.
	last [internSlots]lastValue
}

type lastValue struct {
	v  string
	ok bool
}

// valSame is a val's code for the value its name had last.
const valSame = 0

// valBase shifts a val's str codes above valSame.
const valBase = 1

// recordEncoder appends results in the compact record encoding.
type recordEncoder struct {
	st     recordState
	names  *internWriter
	values *internWriter
	keys   []string // header names of one result, sorted: reused
	vals   []string // their values: reused
	slots  []int    // their slots: reused
}

// name appends a name's str, forgetting the last value of a slot it takes.
func (e *recordEncoder) name(b []byte, s string) ([]byte, int) {
	b, k, fresh := e.names.appendStr(b, s, 0)
	if fresh {
		e.st.last[k] = lastValue{}
	}
	return b, k
}

func (e *recordEncoder) str(b []byte, s string) []byte {
	b, _ = e.name(b, s)
	return b
}

// value appends a header's val: valSame when the name (slot k) had it last.
func (e *recordEncoder) value(b []byte, k int, v string) []byte {
	if k >= 0 {
		if l := e.st.last[k]; l.ok && l.v == v {
			return binary.AppendUvarint(b, valSame)
		}
		e.st.last[k] = lastValue{v: v, ok: true}
	}
	b, _, _ = e.values.appendStr(b, v, valBase)
	return b
}

// sameNames reports whether h's names are those in the last record's
// header slots (which the reader holds too), gathering their values.
func (e *recordEncoder) sameNames(h map[string]string) bool {
	if len(e.st.hdrSlots) == 0 || len(e.st.hdrSlots) != len(h) {
		return false
	}
	e.vals = e.vals[:0]
	for _, k := range e.st.hdrSlots {
		v, ok := h[e.names.slots[k]]
		if !ok {
			return false
		}
		e.vals = append(e.vals, v)
	}
	return true
}

func newRecordEncoder() *recordEncoder {
	return &recordEncoder{names: newInternWriter(), values: newInternWriter()}
}

func (e *recordEncoder) appendResult(b []byte, r *Result) []byte {
	var flags uint64
	set := func(cond bool, f uint64) {
		if cond {
			flags |= f
		}
	}
	set(r.Phase != "", flagPhase)
	set(r.Conn != 0, flagConn)
	set(r.FirstByte != 0, flagFirstByte)
	set(r.Status != 0, flagStatus)
	set(len(r.Headers) > 0, flagHeaders)
	set(r.Body != "", flagBody)
	set(r.Error != "", flagError)
	set(r.Client != 0, flagClient)
	set(r.Key != "", flagKey)
	set(r.Source != "", flagSource)
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendVarint(b, int64(r.Seq)-e.st.seq)
	e.st.seq = int64(r.Seq)
	if flags&flagPhase != 0 {
		b = e.str(b, r.Phase)
	}
	if flags&flagConn != 0 {
		b = binary.AppendVarint(b, r.Conn-e.st.conn)
		e.st.conn = r.Conn
	}
	b = binary.AppendVarint(b, int64(r.Scheduled)-e.st.scheduled)
	e.st.scheduled = int64(r.Scheduled)
	b = binary.AppendVarint(b, int64(r.Sent-r.Scheduled))
	from := r.Sent
	if flags&flagFirstByte != 0 {
		b = binary.AppendVarint(b, int64(r.FirstByte-r.Sent))
		from = r.FirstByte
	}
	b = binary.AppendVarint(b, int64(r.Done-from))
	if flags&flagStatus != 0 {
		b = binary.AppendVarint(b, int64(r.Status)-e.st.status)
		e.st.status = int64(r.Status)
	}
	if flags&flagError != 0 {
		b = e.str(b, r.Error)
	}
	if flags&flagHeaders != 0 {
		b = e.headers(b, r.Headers)
	}
	if flags&flagBody != 0 {
		b = e.str(b, r.Body)
	}
	if flags&flagClient != 0 {
		b = binary.AppendVarint(b, int64(r.Client))
	}
	if flags&flagKey != 0 {
		b = e.str(b, r.Key)
	}
	if flags&flagSource != 0 {
		b = e.str(b, r.Source)
	}
	return b
}

func (e *recordEncoder) headers(b []byte, h map[string]string) []byte {
	if e.sameNames(h) {
		b = binary.AppendUvarint(b, 0)
		for i, k := range e.st.hdrSlots {
			b = e.value(b, k, e.vals[i])
		}
		return b
	}
	e.keys = e.keys[:0]
	for k := range h {
		e.keys = append(e.keys, k)
	}
	slices.Sort(e.keys) // one order for one map: the same bytes every time
	b = binary.AppendUvarint(b, uint64(len(e.keys)))
	e.slots = e.slots[:0]
	for _, k := range e.keys {
		var slot int
		b, slot = e.name(b, k)
		b = e.value(b, slot, h[k])
		e.slots = append(e.slots, slot)
	}
	// Names that are in no slot cannot be "the same names" next time.
	e.st.hdrSlots = e.st.hdrSlots[:0]
	if !slices.Contains(e.slots, -1) {
		e.st.hdrSlots = append(e.st.hdrSlots, e.slots...)
	}
	return b
}

// errRecord is a record that does not decode: the reader says where.
var errRecord = errors.New("malformed result record")

// recordDecoder reads the compact record encoding back.
type recordDecoder struct {
	st     recordState
	names  internReader
	values internReader
	// lean leaves Headers out of the results (still reading them, to keep
	// the state): a reader that only counts needs no map filled.
	lean bool
}

func (d *recordDecoder) name(c *cursor) (string, int) {
	s, k, fresh := c.str(&d.names, c.uvarint())
	if fresh {
		d.st.last[k] = lastValue{}
	}
	return s, k
}

func (d *recordDecoder) str(c *cursor) string {
	s, _ := d.name(c)
	return s
}

// value reads a header's val for the name in slot k.
func (d *recordDecoder) value(c *cursor, k int) string {
	code := c.uvarint()
	if code == valSame {
		if k < 0 || !d.st.last[k].ok {
			c.fail()
			return ""
		}
		return d.st.last[k].v
	}
	if code < valBase {
		c.fail()
		return ""
	}
	v, _, _ := c.str(&d.values, code-valBase)
	if k >= 0 {
		d.st.last[k] = lastValue{v: v, ok: true}
	}
	return v
}

// headers reads a record's headers into h (nil when lean).
func (d *recordDecoder) headers(c *cursor, h map[string]string) {
	n := c.uvarint()
	if c.bad {
		return
	}
	if n == 0 { // the last record's names
		if len(d.st.hdrSlots) == 0 {
			c.fail()
			return
		}
		for _, k := range d.st.hdrSlots {
			v := d.value(c, k)
			if h != nil {
				h[d.names.slots[k]] = v
			}
		}
		return
	}
	if n > uint64(len(c.b)) { // each header takes at least 2 bytes
		c.fail()
		return
	}
	d.st.hdrSlots = d.st.hdrSlots[:0]
	named := true
	for range n {
		name, k := d.name(c)
		v := d.value(c, k)
		if h != nil {
			h[name] = v
		}
		if k < 0 {
			named = false
		}
		d.st.hdrSlots = append(d.st.hdrSlots, k)
	}
	if !named {
		d.st.hdrSlots = d.st.hdrSlots[:0]
	}
}

// cursor reads varints and strings from one block's records; the first
// failure sticks (bad), so a record is decoded whole and checked once.
type cursor struct {
	b   []byte
	bad bool
}

func (c *cursor) uvarint() uint64 {
	v, n := binary.Uvarint(c.b)
	if n <= 0 {
		c.fail()
		return 0
	}
	c.b = c.b[n:]
	return v
}

func (c *cursor) varint() int64 {
	v, n := binary.Varint(c.b)
	if n <= 0 {
		c.fail()
		return 0
	}
	c.b = c.b[n:]
	return v
}

func (c *cursor) fail() {
	c.bad, c.b = true, nil
}

// str reads a str whose code is code (already read): the string, its slot
// (-1: none) and whether it was put there now.
func (c *cursor) str(t *internReader, code uint64) (s string, slot int, fresh bool) {
	if c.bad {
		return "", -1, false
	}
	if code >= strSlotFirst {
		k := code - strSlotFirst
		if k >= uint64(len(t.slots)) {
			c.fail()
			return "", -1, false
		}
		return t.slots[k], int(k), false
	}
	n := c.uvarint()
	if c.bad || n > uint64(len(c.b)) {
		c.fail()
		return "", -1, false
	}
	s = string(c.b[:n])
	c.b = c.b[n:]
	if code == strRemember {
		if n > maxInterned {
			c.fail()
			return "", -1, false
		}
		return s, t.remember(s), true
	}
	return s, -1, false
}

// knownFlags are every flag this version writes; a record with another is
// no record of it.
const knownFlags = flagSource<<1 - 1

// decode reads one record from c into r, replacing every field; r's
// Headers map is cleared and reused when it has one.
func (d *recordDecoder) decode(c *cursor, r *Result) error {
	h := r.Headers
	*r = Result{}
	flags := c.uvarint()
	if flags&^knownFlags != 0 {
		return errRecord
	}
	d.st.seq += c.varint()
	r.Seq = int(d.st.seq)
	if flags&flagPhase != 0 {
		r.Phase = d.str(c)
	}
	if flags&flagConn != 0 {
		d.st.conn += c.varint()
		r.Conn = d.st.conn
	}
	d.st.scheduled += c.varint()
	r.Scheduled = time.Duration(d.st.scheduled)
	r.Sent = r.Scheduled + time.Duration(c.varint())
	from := r.Sent
	if flags&flagFirstByte != 0 {
		r.FirstByte = r.Sent + time.Duration(c.varint())
		from = r.FirstByte
	}
	r.Done = from + time.Duration(c.varint())
	if flags&flagStatus != 0 {
		d.st.status += c.varint()
		r.Status = int(d.st.status)
	}
	if flags&flagError != 0 {
		r.Error = d.str(c)
	}
	if flags&flagHeaders != 0 {
		if d.lean {
			d.headers(c, nil)
		} else {
			if h == nil {
				h = make(map[string]string, 8)
			} else {
				clear(h)
			}
			d.headers(c, h)
			r.Headers = h
		}
	}
	if flags&flagBody != 0 {
		r.Body = d.str(c)
	}
	if flags&flagClient != 0 {
		r.Client = int(c.varint())
	}
	if flags&flagKey != 0 {
		r.Key = d.str(c)
	}
	if flags&flagSource != 0 {
		r.Source = d.str(c)
	}
	if c.bad {
		return errRecord
	}
	return nil
}
