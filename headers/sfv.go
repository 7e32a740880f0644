package headers

// This file is a parser for RFC 9651 Structured Field Values, following the
// algorithms of RFC 9651 §4.2 step by step. It exists because the IETF
// RateLimit fields (draft-ietf-httpapi-ratelimit-headers) are defined as
// structured fields and the module takes no dependencies. Serialisation
// (RFC 9651 §4.1) lives in sfv_serialize.go.

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Token is an RFC 9651 §3.3.4 Token bare item (e.g. `foo123/456`).
type Token string

// Decimal is an RFC 9651 §3.3.2 Decimal bare item. It is kept exactly as a
// count of thousandths because the format allows at most three fractional
// digits, so no float rounding can change a value between parse and serialise.
type Decimal struct {
	Thousandths int64
}

// Float64 returns the decimal as a float64.
func (d Decimal) Float64() float64 { return float64(d.Thousandths) / 1000 }

// String formats the decimal the way RFC 9651 §4.1.5 serialises it.
func (d Decimal) String() string {
	s, err := serializeDecimal(d)
	if err != nil {
		return fmt.Sprintf("Decimal(%d/1000)", d.Thousandths)
	}
	return s
}

// ByteSequence is an RFC 9651 §3.3.5 Byte Sequence bare item (`:base64:`).
type ByteSequence []byte

// Date is an RFC 9651 §3.3.7 Date bare item: seconds since the Unix epoch.
type Date int64

// DisplayString is an RFC 9651 §3.3.8 Display String bare item (`%"..."`),
// already percent-decoded to Unicode.
type DisplayString string

// Param is one parameter: a key and a bare item value.
type Param struct {
	Key   string
	Value any
}

// Params is an ordered map of parameters (RFC 9651 §3.1.2). A repeated key
// keeps its first position and takes its last value (§4.2.3.2).
type Params []Param

// Get returns the value of the parameter key.
func (p Params) Get(key string) (any, bool) {
	for _, kv := range p {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Item is an RFC 9651 §3.3 Item: a bare item with parameters. Value holds one
// of: int64 (Integer), Decimal, string (String), Token, ByteSequence, bool
// (Boolean), Date, DisplayString.
type Item struct {
	Value  any
	Params Params
}

// InnerList is an RFC 9651 §3.1.1 Inner List: items in parentheses, with
// parameters of its own.
type InnerList struct {
	Items  []Item
	Params Params
}

// Member is one List member or Dictionary value: an Item, or an Inner List
// when Inner is non-nil.
type Member struct {
	Item  Item
	Inner *InnerList
}

// List is an RFC 9651 §3.1 List.
type List []Member

// DictEntry is one Dictionary member.
type DictEntry struct {
	Key string
	Member
}

// Dictionary is an RFC 9651 §3.2 Dictionary: an ordered map. A repeated key
// keeps its first position and takes its last value (§4.2.2).
type Dictionary []DictEntry

// Get returns the member for key.
func (d Dictionary) Get(key string) (Member, bool) {
	for _, e := range d {
		if e.Key == key {
			return e.Member, true
		}
	}
	return Member{}, false
}

// sfParser holds the remaining input; every step consumes from the front, as
// the RFC's algorithms do.
type sfParser struct {
	s   string
	pos int // offset into the original input, for error messages
}

func (p *sfParser) empty() bool { return len(p.s) == 0 }
func (p *sfParser) peek() byte  { return p.s[0] }
func (p *sfParser) advance(n int) {
	p.s = p.s[n:]
	p.pos += n
}

func (p *sfParser) errorf(format string, args ...any) error {
	return fmt.Errorf("structured field: at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

// discardSP drops leading SP only (RFC 9651 uses SP, not OWS, here).
func (p *sfParser) discardSP() {
	for !p.empty() && p.peek() == ' ' {
		p.advance(1)
	}
}

// discardOWS drops leading SP and HTAB (RFC 9110 §5.6.3 OWS).
func (p *sfParser) discardOWS() {
	for !p.empty() && (p.peek() == ' ' || p.peek() == '\t') {
		p.advance(1)
	}
}

// newSFParser runs the common prologue of RFC 9651 §4.2: the input must be
// ASCII, and leading and trailing SP are discarded.
func newSFParser(input string) (*sfParser, error) {
	for i := 0; i < len(input); i++ {
		if input[i] >= 0x80 {
			return nil, fmt.Errorf("structured field: non-ASCII byte 0x%02x at offset %d (RFC 9651 §4.2)", input[i], i)
		}
	}
	lead := len(input) - len(strings.TrimLeft(input, " "))
	return &sfParser{s: strings.Trim(input, " "), pos: lead}, nil
}

// ParseList parses a field value as an RFC 9651 List (§4.2.1). Multiple field
// lines must already be joined with ", " (§4.2).
func ParseList(input string) (List, error) {
	p, err := newSFParser(input)
	if err != nil {
		return nil, err
	}
	l, err := p.parseList()
	if err != nil {
		return nil, err
	}
	return l, p.finish()
}

// ParseDictionary parses a field value as an RFC 9651 Dictionary (§4.2.2).
func ParseDictionary(input string) (Dictionary, error) {
	p, err := newSFParser(input)
	if err != nil {
		return nil, err
	}
	d, err := p.parseDictionary()
	if err != nil {
		return nil, err
	}
	return d, p.finish()
}

// ParseItem parses a field value as an RFC 9651 Item (§4.2.3).
func ParseItem(input string) (Item, error) {
	p, err := newSFParser(input)
	if err != nil {
		return Item{}, err
	}
	it, err := p.parseItem()
	if err != nil {
		return Item{}, err
	}
	return it, p.finish()
}

// finish is the epilogue of RFC 9651 §4.2: after the top-level structure,
// only SP may remain.
func (p *sfParser) finish() error {
	p.discardSP()
	if !p.empty() {
		return p.errorf("unexpected %q after the value", p.peek())
	}
	return nil
}

// parseList is RFC 9651 §4.2.1.
func (p *sfParser) parseList() (List, error) {
	var members List
	for !p.empty() {
		m, err := p.parseItemOrInnerList()
		if err != nil {
			return nil, err
		}
		members = append(members, m)
		p.discardOWS()
		if p.empty() {
			return members, nil
		}
		if c := p.peek(); c != ',' {
			return nil, p.errorf("expected ',' between list members, found %q", c)
		}
		p.advance(1)
		p.discardOWS()
		if p.empty() {
			return nil, p.errorf("trailing ',' at the end of a list")
		}
	}
	return members, nil
}

// parseItemOrInnerList is RFC 9651 §4.2.1.1.
func (p *sfParser) parseItemOrInnerList() (Member, error) {
	if !p.empty() && p.peek() == '(' {
		il, err := p.parseInnerList()
		if err != nil {
			return Member{}, err
		}
		return Member{Inner: il}, nil
	}
	it, err := p.parseItem()
	if err != nil {
		return Member{}, err
	}
	return Member{Item: it}, nil
}

// parseInnerList is RFC 9651 §4.2.1.2.
func (p *sfParser) parseInnerList() (*InnerList, error) {
	if p.empty() || p.peek() != '(' {
		return nil, p.errorf("expected '(' to open an inner list")
	}
	p.advance(1)
	il := &InnerList{Items: []Item{}}
	for !p.empty() {
		p.discardSP()
		if !p.empty() && p.peek() == ')' {
			p.advance(1)
			params, err := p.parseParameters()
			if err != nil {
				return nil, err
			}
			il.Params = params
			return il, nil
		}
		it, err := p.parseItem()
		if err != nil {
			return nil, err
		}
		il.Items = append(il.Items, it)
		if p.empty() {
			break
		}
		if c := p.peek(); c != ' ' && c != ')' {
			return nil, p.errorf("expected SP or ')' after an inner-list item, found %q", c)
		}
	}
	return nil, p.errorf("inner list is not closed with ')'")
}

// parseDictionary is RFC 9651 §4.2.2.
func (p *sfParser) parseDictionary() (Dictionary, error) {
	var dict Dictionary
	index := map[string]int{}
	for !p.empty() {
		key, err := p.parseKey()
		if err != nil {
			return nil, err
		}
		var m Member
		if !p.empty() && p.peek() == '=' {
			p.advance(1)
			m, err = p.parseItemOrInnerList()
			if err != nil {
				return nil, err
			}
		} else {
			// A key alone means Boolean true, possibly with parameters.
			params, err := p.parseParameters()
			if err != nil {
				return nil, err
			}
			m = Member{Item: Item{Value: true, Params: params}}
		}
		// An index keeps repeated keys linear rather than quadratic in
		// the (attacker-controlled) field length.
		if i, ok := index[key]; ok {
			dict[i].Member = m
		} else {
			index[key] = len(dict)
			dict = append(dict, DictEntry{Key: key, Member: m})
		}
		p.discardOWS()
		if p.empty() {
			return dict, nil
		}
		if c := p.peek(); c != ',' {
			return nil, p.errorf("expected ',' between dictionary members, found %q", c)
		}
		p.advance(1)
		p.discardOWS()
		if p.empty() {
			return nil, p.errorf("trailing ',' at the end of a dictionary")
		}
	}
	return dict, nil
}

// parseItem is RFC 9651 §4.2.3.
func (p *sfParser) parseItem() (Item, error) {
	v, err := p.parseBareItem()
	if err != nil {
		return Item{}, err
	}
	params, err := p.parseParameters()
	if err != nil {
		return Item{}, err
	}
	return Item{Value: v, Params: params}, nil
}

func isDigit(c byte) bool   { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool   { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isLCAlpha(c byte) bool { return c >= 'a' && c <= 'z' }

// isTchar is RFC 9110 §5.6.2 tchar.
func isTchar(c byte) bool {
	if isDigit(c) || isAlpha(c) {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// parseBareItem is RFC 9651 §4.2.3.1.
func (p *sfParser) parseBareItem() (any, error) {
	if p.empty() {
		return nil, p.errorf("expected an item, found the end of the value")
	}
	c := p.peek()
	switch {
	case c == '-' || isDigit(c):
		return p.parseNumber()
	case c == '"':
		return p.parseString()
	case c == '*' || isAlpha(c):
		return p.parseToken(), nil
	case c == ':':
		return p.parseByteSequence()
	case c == '?':
		return p.parseBoolean()
	case c == '@':
		return p.parseDate()
	case c == '%':
		return p.parseDisplayString()
	}
	return nil, p.errorf("%q cannot start an item", c)
}

// parseParameters is RFC 9651 §4.2.3.2.
func (p *sfParser) parseParameters() (Params, error) {
	var params Params
	var index map[string]int // allocated only when parameters are present
	for !p.empty() && p.peek() == ';' {
		p.advance(1)
		p.discardSP()
		key, err := p.parseKey()
		if err != nil {
			return nil, err
		}
		var v any = true
		if !p.empty() && p.peek() == '=' {
			p.advance(1)
			v, err = p.parseBareItem()
			if err != nil {
				return nil, err
			}
		}
		if index == nil {
			index = map[string]int{}
		}
		if i, ok := index[key]; ok {
			params[i].Value = v
		} else {
			index[key] = len(params)
			params = append(params, Param{Key: key, Value: v})
		}
	}
	return params, nil
}

func isKeyChar(c byte) bool {
	return isLCAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*'
}

// parseKey is RFC 9651 §4.2.3.3.
func (p *sfParser) parseKey() (string, error) {
	if p.empty() {
		return "", p.errorf("expected a key, found the end of the value")
	}
	if c := p.peek(); !isLCAlpha(c) && c != '*' {
		return "", p.errorf("a key must start with a lowercase letter or '*', found %q", c)
	}
	n := 0
	for n < len(p.s) && isKeyChar(p.s[n]) {
		n++
	}
	k := p.s[:n]
	p.advance(n)
	return k, nil
}

// parseNumber is RFC 9651 §4.2.4 (Integer or Decimal).
func (p *sfParser) parseNumber() (any, error) {
	neg := false
	if p.peek() == '-' {
		neg = true
		p.advance(1)
	}
	if p.empty() {
		return nil, p.errorf("'-' without digits")
	}
	if !isDigit(p.peek()) {
		return nil, p.errorf("expected a digit, found %q", p.peek())
	}
	decimal := false
	n := 0
	for n < len(p.s) {
		c := p.s[n]
		if isDigit(c) {
			n++
		} else if !decimal && c == '.' {
			if n > 12 {
				return nil, p.errorf("decimal has more than 12 integer digits (RFC 9651 §3.3.2)")
			}
			decimal = true
			n++
		} else {
			break
		}
		if !decimal && n > 15 {
			return nil, p.errorf("integer has more than 15 digits (RFC 9651 §3.3.1)")
		}
		if decimal && n > 16 {
			return nil, p.errorf("decimal has more than 16 characters (RFC 9651 §3.3.2)")
		}
	}
	num := p.s[:n]
	p.advance(n)
	if !decimal {
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil { // unreachable: at most 15 digits
			return nil, p.errorf("bad integer %q", num)
		}
		if neg {
			v = -v
		}
		return v, nil
	}
	dot := strings.IndexByte(num, '.')
	frac := num[dot+1:]
	if frac == "" {
		return nil, p.errorf("decimal %q ends with '.'", num)
	}
	if len(frac) > 3 {
		return nil, p.errorf("decimal %q has more than 3 fractional digits (RFC 9651 §3.3.2)", num)
	}
	ip, _ := strconv.ParseInt(num[:dot], 10, 64) // at most 12 digits
	fp, _ := strconv.ParseInt(frac+strings.Repeat("0", 3-len(frac)), 10, 64)
	t := ip*1000 + fp
	if neg {
		t = -t
	}
	return Decimal{Thousandths: t}, nil
}

// parseString is RFC 9651 §4.2.5.
func (p *sfParser) parseString() (string, error) {
	p.advance(1) // DQUOTE, checked by the caller
	var b strings.Builder
	for !p.empty() {
		c := p.peek()
		p.advance(1)
		switch {
		case c == '\\':
			if p.empty() {
				return "", p.errorf("string ends inside an escape")
			}
			next := p.peek()
			if next != '"' && next != '\\' {
				return "", p.errorf("only \\\" and \\\\ may be escaped in a string, found \\%c", next)
			}
			p.advance(1)
			b.WriteByte(next)
		case c == '"':
			return b.String(), nil
		case c < 0x20 || c >= 0x7f:
			return "", p.errorf("control character 0x%02x in a string", c)
		default:
			b.WriteByte(c)
		}
	}
	return "", p.errorf("string is not closed with '\"'")
}

// parseToken is RFC 9651 §4.2.6; the caller checked the first character.
func (p *sfParser) parseToken() Token {
	n := 1
	for n < len(p.s) && (isTchar(p.s[n]) || p.s[n] == ':' || p.s[n] == '/') {
		n++
	}
	t := Token(p.s[:n])
	p.advance(n)
	return t
}

// parseByteSequence is RFC 9651 §4.2.7.
func (p *sfParser) parseByteSequence() (ByteSequence, error) {
	p.advance(1) // ':'
	end := strings.IndexByte(p.s, ':')
	if end < 0 {
		return nil, p.errorf("byte sequence is not closed with ':'")
	}
	b64 := p.s[:end]
	for i := 0; i < len(b64); i++ {
		c := b64[i]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '/' && c != '=' {
			return nil, p.errorf("%q is not a base64 character (RFC 9651 §3.3.5)", c)
		}
	}
	// §4.2.7 asks parsers not to fail on missing "=" padding or non-zero pad
	// bits; Go's decoder ignores pad bits unless Strict, and the unpadded
	// alphabet handles a value without "=". Excess or misplaced "=" fails.
	enc := base64.StdEncoding
	if !strings.Contains(b64, "=") {
		enc = base64.RawStdEncoding
	}
	out, err := enc.DecodeString(b64)
	if err != nil {
		return nil, p.errorf("byte sequence is not valid base64: %v", err)
	}
	p.advance(end + 1)
	if out == nil {
		out = []byte{}
	}
	return ByteSequence(out), nil
}

// parseBoolean is RFC 9651 §4.2.8.
func (p *sfParser) parseBoolean() (bool, error) {
	p.advance(1) // '?'
	if !p.empty() {
		switch p.peek() {
		case '1':
			p.advance(1)
			return true, nil
		case '0':
			p.advance(1)
			return false, nil
		}
	}
	return false, p.errorf("a boolean must be ?0 or ?1")
}

// parseDate is RFC 9651 §4.2.9.
func (p *sfParser) parseDate() (Date, error) {
	p.advance(1) // '@'
	if p.empty() {
		return 0, p.errorf("'@' without a number")
	}
	v, err := p.parseNumber()
	if err != nil {
		return 0, err
	}
	i, ok := v.(int64)
	if !ok {
		return 0, p.errorf("a date must be an integer number of seconds (RFC 9651 §3.3.7)")
	}
	return Date(i), nil
}

// parseDisplayString is RFC 9651 §4.2.10.
func (p *sfParser) parseDisplayString() (DisplayString, error) {
	if len(p.s) < 2 || p.s[1] != '"' {
		return "", p.errorf("a display string starts with %%\"")
	}
	p.advance(2)
	var buf []byte
	for !p.empty() {
		c := p.peek()
		p.advance(1)
		switch {
		case c < 0x20 || c >= 0x7f:
			return "", p.errorf("control character 0x%02x in a display string", c)
		case c == '%':
			if len(p.s) < 2 || !isLowerHex(p.s[0]) || !isLowerHex(p.s[1]) {
				return "", p.errorf("'%%' must be followed by two lowercase hex digits")
			}
			v, _ := strconv.ParseUint(p.s[:2], 16, 8)
			buf = append(buf, byte(v))
			p.advance(2)
		case c == '"':
			if !utf8.Valid(buf) {
				return "", p.errorf("display string is not valid UTF-8")
			}
			return DisplayString(buf), nil
		default:
			buf = append(buf, c)
		}
	}
	return "", p.errorf("display string is not closed with '\"'")
}

func isLowerHex(c byte) bool { return isDigit(c) || (c >= 'a' && c <= 'f') }
