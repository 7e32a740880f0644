package headers

import (
	"reflect"
	"strings"
	"testing"
)

// Test helpers: compact constructors for expected values.
func item(v any, ps ...Param) Item { return Item{Value: v, Params: params(ps...)} }
func params(ps ...Param) Params {
	if len(ps) == 0 {
		return nil
	}
	return Params(ps)
}
func prm(k string, v any) Param { return Param{Key: k, Value: v} }
func mem(it Item) Member        { return Member{Item: it} }
func inner(items []Item, ps ...Param) Member {
	if items == nil {
		items = []Item{}
	}
	return Member{Inner: &InnerList{Items: items, Params: params(ps...)}}
}
func dec(t int64) Decimal { return Decimal{Thousandths: t} }

// The examples of RFC 9651 §3, parsed as the RFC describes them; canon is the
// §4.1 serialisation.
func TestParseListRFC9651Examples(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  List
		canon string
	}{
		{"§3.1 tokens", "sugar, tea, rum",
			List{mem(item(Token("sugar"))), mem(item(Token("tea"))), mem(item(Token("rum")))}, "sugar, tea, rum"},
		{"§3.1.1 inner lists", `("foo" "bar"), ("baz"), ("bat" "one"), ()`,
			List{inner([]Item{item("foo"), item("bar")}), inner([]Item{item("baz")}), inner([]Item{item("bat"), item("one")}), inner(nil)},
			`("foo" "bar"), ("baz"), ("bat" "one"), ()`},
		{"§3.1.1 inner list parameters", `("foo"; a=1;b=2);lvl=5, ("bar" "baz");lvl=1`,
			List{inner([]Item{item("foo", prm("a", int64(1)), prm("b", int64(2)))}, prm("lvl", int64(5))),
				inner([]Item{item("bar"), item("baz")}, prm("lvl", int64(1)))},
			`("foo";a=1;b=2);lvl=5, ("bar" "baz");lvl=1`},
		{"§3.1.2 parameters", `abc;a=1;b=2; cde_456, (ghi;jk=4 l);q="9";r=w`,
			List{mem(item(Token("abc"), prm("a", int64(1)), prm("b", int64(2)), prm("cde_456", true))),
				inner([]Item{item(Token("ghi"), prm("jk", int64(4))), item(Token("l"))}, prm("q", "9"), prm("r", Token("w")))},
			`abc;a=1;b=2;cde_456, (ghi;jk=4 l);q="9";r=w`},
		{"empty", "", nil, ""},
		{"only SP", "   ", nil, ""},
		{"tab separated", "1\t,\t42", List{mem(item(int64(1))), mem(item(int64(42)))}, "1, 42"},
		{"leading SP", "  42, 43", List{mem(item(int64(42))), mem(item(int64(43)))}, "42, 43"},
		{"inner list inner SP", "( 1  2 )", List{inner([]Item{item(int64(1)), item(int64(2))})}, "(1 2)"},
		{"duplicate param keeps first position", "a;x=1;y=2;x=3", List{mem(item(Token("a"), prm("x", int64(3)), prm("y", int64(2))))}, "a;x=3;y=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseList(tt.in)
			if err != nil {
				t.Fatalf("ParseList(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseList(%q)\n got %#v\nwant %#v", tt.in, got, tt.want)
			}
			s, err := SerializeList(got)
			if err != nil || s != tt.canon {
				t.Fatalf("SerializeList = %q, %v; want %q", s, err, tt.canon)
			}
		})
	}
}

func TestParseDictionaryRFC9651Examples(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  Dictionary
		canon string
	}{
		{"§3.2 basic", `en="Applepie", da=:w4ZibGV0w6ZydGUK:`,
			Dictionary{{"en", mem(item("Applepie"))}, {"da", mem(item(ByteSequence("\xc3\x86blet\xc3\xa6rte\n")))}},
			`en="Applepie", da=:w4ZibGV0w6ZydGUK:`},
		{"§3.2 booleans", `a=?0, b, c; foo=bar`,
			Dictionary{{"a", mem(item(false))}, {"b", mem(item(true))}, {"c", mem(item(true, prm("foo", Token("bar"))))}},
			`a=?0, b, c;foo=bar`},
		{"§3.2 inner list value", `rating=1.5, feelings=(joy sadness)`,
			Dictionary{{"rating", mem(item(dec(1500)))}, {"feelings", inner([]Item{item(Token("joy")), item(Token("sadness"))})}},
			`rating=1.5, feelings=(joy sadness)`},
		{"§3.2 mixed", `a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid`,
			Dictionary{{"a", inner([]Item{item(int64(1)), item(int64(2))})}, {"b", mem(item(int64(3)))},
				{"c", mem(item(int64(4), prm("aa", Token("bb"))))}, {"d", inner([]Item{item(int64(5)), item(int64(6))}, prm("valid", true))}},
			`a=(1 2), b=3, c=4;aa=bb, d=(5 6);valid`},
		{"explicit true becomes bare key", `a=1, b=?1;foo=9, c=3`,
			Dictionary{{"a", mem(item(int64(1)))}, {"b", mem(item(true, prm("foo", int64(9))))}, {"c", mem(item(int64(3)))}},
			`a=1, b;foo=9, c=3`},
		{"duplicate key keeps first position", `a=1,b=2,a=3`,
			Dictionary{{"a", mem(item(int64(3)))}, {"b", mem(item(int64(2)))}}, `a=3, b=2`},
		{"draft-07 RateLimit", `limit=100, remaining=50, reset=5`,
			Dictionary{{"limit", mem(item(int64(100)))}, {"remaining", mem(item(int64(50)))}, {"reset", mem(item(int64(5)))}},
			`limit=100, remaining=50, reset=5`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDictionary(tt.in)
			if err != nil {
				t.Fatalf("ParseDictionary(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseDictionary(%q)\n got %#v\nwant %#v", tt.in, got, tt.want)
			}
			s, err := SerializeDictionary(got)
			if err != nil || s != tt.canon {
				t.Fatalf("SerializeDictionary = %q, %v; want %q", s, err, tt.canon)
			}
		})
	}
}

// Bare items from RFC 9651 §3.3 and the limits of §3.3.1–§3.3.8.
func TestParseItem(t *testing.T) {
	tests := []struct {
		in    string
		want  Item
		canon string
	}{
		{"5", item(int64(5)), "5"},
		{"5; foo=bar", item(int64(5), prm("foo", Token("bar"))), "5;foo=bar"},
		{"1; a; b=?0", item(int64(1), prm("a", true), prm("b", false)), "1;a;b=?0"},
		{"42", item(int64(42)), "42"},
		{"-42", item(int64(-42)), "-42"},
		{"00", item(int64(0)), "0"},
		{"-0", item(int64(0)), "0"},
		{"042", item(int64(42)), "42"},
		{"999999999999999", item(int64(999999999999999)), "999999999999999"},
		{"-999999999999999", item(int64(-999999999999999)), "-999999999999999"},
		{"4.5", item(dec(4500)), "4.5"},
		{"-1.23", item(dec(-1230)), "-1.23"},
		{"1.123", item(dec(1123)), "1.123"},
		{"2.0", item(dec(2000)), "2.0"},
		{"-0.0", item(dec(0)), "0.0"},
		{"123456789012.1", item(dec(123456789012100)), "123456789012.1"},
		{`"hello world"`, item("hello world"), `"hello world"`},
		{`"a \"q\" and \\"`, item(`a "q" and \`), `"a \"q\" and \\"`},
		{`""`, item(""), `""`},
		{"foo123/456", item(Token("foo123/456")), "foo123/456"},
		{"*foo", item(Token("*foo")), "*foo"},
		{"a:b/c!#$%&'*+-.^_`|~", item(Token("a:b/c!#$%&'*+-.^_`|~")), "a:b/c!#$%&'*+-.^_`|~"},
		{":cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:", item(ByteSequence("pretend this is binary content.")), ":cHJldGVuZCB0aGlzIGlzIGJpbmFyeSBjb250ZW50Lg==:"},
		{"::", item(ByteSequence{}), "::"},
		{":aGVsbG8:", item(ByteSequence("hello")), ":aGVsbG8=:"}, // missing padding tolerated (§4.2.7)
		{":iZ==:", item(ByteSequence{0x89}), ":iQ==:"},           // non-zero pad bits tolerated
		{"?1", item(true), "?1"},
		{"?0", item(false), "?0"},
		{"@1659578233", item(Date(1659578233)), "@1659578233"},
		{"@-1", item(Date(-1)), "@-1"},
		{`%"This is intended for display to %c3%bcsers."`, item(DisplayString("This is intended for display to üsers.")), `%"This is intended for display to %c3%bcsers."`},
		{`%"%25 and %22"`, item(DisplayString(`% and "`)), `%"%25 and %22"`},
		{"  7  ", item(int64(7)), "7"},
	}
	for _, tt := range tests {
		got, err := ParseItem(tt.in)
		if err != nil {
			t.Errorf("ParseItem(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseItem(%q)\n got %#v\nwant %#v", tt.in, got, tt.want)
			continue
		}
		if s, err := SerializeItem(got); err != nil || s != tt.canon {
			t.Errorf("SerializeItem(ParseItem(%q)) = %q, %v; want %q", tt.in, s, err, tt.canon)
		}
	}
}

func TestParseStructuredInvalid(t *testing.T) {
	items := []struct{ in, why string }{
		{"", "empty item"},
		{"1234567890123456", "16-digit integer (§3.3.1)"},
		{"-1234567890123456", "16-digit negative integer"},
		{"1234567890123.0", "13 integer digits in a decimal (§3.3.2)"},
		{"1.1234", "4 fractional digits"},
		{"1.", "decimal ending in '.'"},
		{"1..4", "double dot"},
		{"1.5.4", "two decimal points"},
		{"--0", "double sign"},
		{"- 42", "space after sign"},
		{"-", "lone sign"},
		{"4-2", "sign out of place"},
		{"2,3", "comma in an item"},
		{`"abc`, "unterminated string"},
		{`"a\b"`, "bad escape"},
		{"\"a\x01\"", "control character in string"},
		{"\"\xc3\xa9\"", "non-ASCII"},
		{`"abc\`, "string ending in escape"},
		{"?2", "bad boolean"},
		{"?", "truncated boolean"},
		{":aGVsbG8", "unterminated byte sequence"},
		{":aGVs bG8=:", "space in byte sequence"},
		{":_-Ah:", "base64url alphabet"},
		{":=aGVsbG8=:", "leading padding"},
		{":a=GVsbG8=:", "padding in the middle"},
		{"@1.5", "decimal date (§3.3.7)"},
		{"@", "empty date"},
		{`%"abc`, "unterminated display string"},
		{`%"%C3%BC"`, "uppercase hex in display string"},
		{`%"%c3"`, "invalid UTF-8 in display string"},
		{`%"%g0"`, "bad hex"},
		{`%abc`, "display string without quote"},
		{"a;A=1", "uppercase parameter key"},
		{"a;1=1", "parameter key starting with a digit"},
		{"a ;b=1", "space before ';'"},
		{"a;b= 1", "space after '='"},
		{"1 2", "two items"},
		{"(1 2)", "inner list is not an item"},
		{"&", "not an item"},
		{"a\t", "trailing tab (only SP is trimmed)"},
	}
	for _, tt := range items {
		if got, err := ParseItem(tt.in); err == nil {
			t.Errorf("ParseItem(%q) = %#v, want error (%s)", tt.in, got, tt.why)
		}
	}
	lists := []string{"1, 42,", "1,,42", ",1", "(1 2", "(1,2)", "(1 2)x", "1;", "a, b c"}
	for _, in := range lists {
		if got, err := ParseList(in); err == nil {
			t.Errorf("ParseList(%q) = %#v, want error", in, got)
		}
	}
	dicts := []string{"a =1, b=2", "a=1, b= 2", "a=1, b=2,", "a=1,,b=2", "a=1,1b=2", "a=1,B=2", "a=1,b!=2", "=1", `"a"=1`}
	for _, in := range dicts {
		if got, err := ParseDictionary(in); err == nil {
			t.Errorf("ParseDictionary(%q) = %#v, want error", in, got)
		}
	}
}

// RFC 9651 §4.2: multiple field lines are joined with ", " before parsing,
// and §3.1 says the two forms are equivalent.
func TestStructuredMultipleLines(t *testing.T) {
	one, err1 := ParseList("sugar, tea, rum")
	two, err2 := ParseList(strings.Join([]string{"sugar, tea", "rum"}, ", "))
	if err1 != nil || err2 != nil || !reflect.DeepEqual(one, two) {
		t.Fatalf("joined lines differ: %v %v %#v %#v", err1, err2, one, two)
	}
}

func TestSerializeRejectsInvalid(t *testing.T) {
	bad := []Item{
		item(int64(1_000_000_000_000_000)),
		item(dec(1_000_000_000_000_000)),
		item("caf\xc3\xa9"),
		item("tab\t"),
		item(Token("")),
		item(Token("1abc")),
		item(Token("a b")),
		item(DisplayString("\xff")),
		item(3.5), // float64 is not a bare item type
		item(int64(1), prm("Key", true)),
		item(int64(1), prm("", true)),
	}
	for _, it := range bad {
		if s, err := SerializeItem(it); err == nil {
			t.Errorf("SerializeItem(%#v) = %q, want error", it, s)
		}
	}
	if _, err := SerializeDictionary(Dictionary{{"Bad", mem(item(int64(1)))}}); err == nil {
		t.Error("SerializeDictionary accepted an uppercase key")
	}
}

func TestDecimal(t *testing.T) {
	if got := dec(-1230).Float64(); got != -1.23 {
		t.Errorf("Float64 = %v", got)
	}
	if got := dec(1500).String(); got != "1.5" {
		t.Errorf("String = %q", got)
	}
	if got := (Decimal{Thousandths: -9223372036854775808}).String(); !strings.HasPrefix(got, "Decimal(") {
		t.Errorf("out-of-range String = %q", got)
	}
}

func TestParamsAndDictionaryGet(t *testing.T) {
	l, err := ParseList(`"default";q=100;w=60`)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := l[0].Item.Params.Get("w"); !ok || v != int64(60) {
		t.Errorf("Get(w) = %v, %v", v, ok)
	}
	if _, ok := l[0].Item.Params.Get("x"); ok {
		t.Error("Get(x) found a missing key")
	}
	d, _ := ParseDictionary("a=1")
	if _, ok := d.Get("b"); ok {
		t.Error("Dictionary.Get found a missing key")
	}
}
