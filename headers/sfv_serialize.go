package headers

// Serialisation of RFC 9651 Structured Field Values (RFC 9651 §4.1). The
// probe only reads headers; the serialiser exists so that parsed values can be
// checked by round-trip (parse → serialise → parse) in tests and fuzzing, and
// so that findings can quote a value in its canonical form.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// errNotSF marks values that cannot be represented as structured fields.
var errNotSF = errors.New("structured field: cannot serialise")

// SerializeList serialises l per RFC 9651 §4.1.1. An empty List serialises to
// "" (§4.1 says such a field is not sent at all).
func SerializeList(l List) (string, error) {
	var b strings.Builder
	for i, m := range l {
		if i > 0 {
			b.WriteString(", ")
		}
		if err := writeMember(&b, m); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// SerializeDictionary serialises d per RFC 9651 §4.1.2.
func SerializeDictionary(d Dictionary) (string, error) {
	var b strings.Builder
	for i, e := range d {
		if i > 0 {
			b.WriteString(", ")
		}
		if err := writeKey(&b, e.Key); err != nil {
			return "", err
		}
		// A member whose value is Boolean true is written as the bare key,
		// followed by its parameters (§4.1.2 step 1.2).
		if e.Inner == nil {
			if v, ok := e.Item.Value.(bool); ok && v {
				if err := writeParams(&b, e.Item.Params); err != nil {
					return "", err
				}
				continue
			}
		}
		b.WriteByte('=')
		if err := writeMember(&b, e.Member); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// SerializeItem serialises it per RFC 9651 §4.1.3.
func SerializeItem(it Item) (string, error) {
	var b strings.Builder
	if err := writeItem(&b, it); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeMember(b *strings.Builder, m Member) error {
	if m.Inner == nil {
		return writeItem(b, m.Item)
	}
	// §4.1.1.1 Inner List.
	b.WriteByte('(')
	for i, it := range m.Inner.Items {
		if i > 0 {
			b.WriteByte(' ')
		}
		if err := writeItem(b, it); err != nil {
			return err
		}
	}
	b.WriteByte(')')
	return writeParams(b, m.Inner.Params)
}

func writeItem(b *strings.Builder, it Item) error {
	if err := writeBareItem(b, it.Value); err != nil {
		return err
	}
	return writeParams(b, it.Params)
}

// writeParams is RFC 9651 §4.1.1.2: a Boolean true value is implied by the
// bare key.
func writeParams(b *strings.Builder, ps Params) error {
	for _, p := range ps {
		b.WriteByte(';')
		if err := writeKey(b, p.Key); err != nil {
			return err
		}
		if v, ok := p.Value.(bool); ok && v {
			continue
		}
		b.WriteByte('=')
		if err := writeBareItem(b, p.Value); err != nil {
			return err
		}
	}
	return nil
}

// writeKey is RFC 9651 §4.1.1.3.
func writeKey(b *strings.Builder, k string) error {
	if k == "" || (!isLCAlpha(k[0]) && k[0] != '*') {
		return fmt.Errorf("%w: key %q must start with a lowercase letter or '*'", errNotSF, k)
	}
	for i := 0; i < len(k); i++ {
		if !isKeyChar(k[i]) {
			return fmt.Errorf("%w: key %q contains %q", errNotSF, k, k[i])
		}
	}
	b.WriteString(k)
	return nil
}

// maxSFInteger bounds Integers to 15 digits (RFC 9651 §3.3.1).
const maxSFInteger = 999_999_999_999_999

// writeBareItem is RFC 9651 §4.1.3.1.
func writeBareItem(b *strings.Builder, v any) error {
	switch v := v.(type) {
	case int64:
		return writeInteger(b, v)
	case int:
		return writeInteger(b, int64(v))
	case Decimal:
		s, err := serializeDecimal(v)
		if err != nil {
			return err
		}
		b.WriteString(s)
	case string:
		// §4.1.6: only printable ASCII; DQUOTE and backslash are escaped.
		b.WriteByte('"')
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c < 0x20 || c >= 0x7f {
				return fmt.Errorf("%w: string contains byte 0x%02x", errNotSF, c)
			}
			if c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
		b.WriteByte('"')
	case Token:
		// §4.1.7.
		if v == "" || (!isAlpha(v[0]) && v[0] != '*') {
			return fmt.Errorf("%w: token %q must start with a letter or '*'", errNotSF, string(v))
		}
		for i := 1; i < len(v); i++ {
			if c := v[i]; !isTchar(c) && c != ':' && c != '/' {
				return fmt.Errorf("%w: token %q contains %q", errNotSF, string(v), c)
			}
		}
		b.WriteString(string(v))
	case ByteSequence:
		// §4.1.8: padded base64.
		b.WriteByte(':')
		b.WriteString(base64.StdEncoding.EncodeToString(v))
		b.WriteByte(':')
	case []byte:
		return writeBareItem(b, ByteSequence(v))
	case bool:
		if v {
			b.WriteString("?1")
		} else {
			b.WriteString("?0")
		}
	case Date:
		// §4.1.10: an Integer prefixed with "@".
		b.WriteByte('@')
		return writeInteger(b, int64(v))
	case DisplayString:
		// §4.1.11: percent-encode '%', DQUOTE and anything outside
		// printable ASCII, in lowercase hex.
		if !utf8.ValidString(string(v)) {
			return fmt.Errorf("%w: display string is not valid UTF-8", errNotSF)
		}
		b.WriteString(`%"`)
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c == '%' || c == '"' || c < 0x20 || c >= 0x7f {
				fmt.Fprintf(b, "%%%02x", c)
			} else {
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	default:
		return fmt.Errorf("%w: unsupported bare item type %T", errNotSF, v)
	}
	return nil
}

// writeInteger is RFC 9651 §4.1.4.
func writeInteger(b *strings.Builder, v int64) error {
	if v > maxSFInteger || v < -maxSFInteger {
		return fmt.Errorf("%w: integer %d is outside ±999,999,999,999,999", errNotSF, v)
	}
	b.WriteString(strconv.FormatInt(v, 10))
	return nil
}

// serializeDecimal is RFC 9651 §4.1.5: at most 12 integer digits, at least
// one and at most three fractional digits, no trailing zeros.
func serializeDecimal(d Decimal) (string, error) {
	t := d.Thousandths
	neg := t < 0
	var u uint64
	if neg {
		u = uint64(-(t + 1)) + 1 // safe for math.MinInt64
	} else {
		u = uint64(t)
	}
	ip, fp := u/1000, u%1000
	if ip > 999_999_999_999 {
		return "", fmt.Errorf("%w: decimal has more than 12 integer digits", errNotSF)
	}
	frac := strings.TrimRight(fmt.Sprintf("%03d", fp), "0")
	if frac == "" {
		frac = "0"
	}
	s := strconv.FormatUint(ip, 10) + "." + frac
	if neg && u != 0 {
		s = "-" + s
	}
	return s, nil
}
