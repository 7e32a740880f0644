package results

import (
	"encoding/json"
	"slices"
	"strconv"
)

// appendResultLine appends r's results-file line — exactly the bytes
// json.Marshal(resultLine{Type: "result", Result: r}) gives, and a newline
// — to b. The writer does this for every request; encoding/json's
// reflection and its allocations (the value boxed, the output copied) were
// ~9 % of a max-throughput run's CPU profile. Strings that need escaping
// (rare: error messages and headers are mostly plain ASCII) are left to
// encoding/json, so the escaping rules stay its own.
func appendResultLine(b []byte, r *Result) []byte {
	b = append(b, `{"type":"result","seq":`...)
	b = strconv.AppendInt(b, int64(r.Seq), 10)
	if r.Phase != "" {
		b = appendJSONField(b, "phase", r.Phase)
	}
	if r.Client != 0 {
		b = append(b, `,"client":`...)
		b = strconv.AppendInt(b, int64(r.Client), 10)
	}
	if r.Key != "" {
		b = appendJSONField(b, "key", r.Key)
	}
	if r.Source != "" {
		b = appendJSONField(b, "source", r.Source)
	}
	if r.Conn != 0 {
		b = append(b, `,"conn":`...)
		b = strconv.AppendInt(b, r.Conn, 10)
	}
	b = append(b, `,"scheduled_ns":`...)
	b = strconv.AppendInt(b, int64(r.Scheduled), 10)
	b = append(b, `,"sent_ns":`...)
	b = strconv.AppendInt(b, int64(r.Sent), 10)
	b = append(b, `,"first_byte_ns":`...)
	b = strconv.AppendInt(b, int64(r.FirstByte), 10)
	b = append(b, `,"done_ns":`...)
	b = strconv.AppendInt(b, int64(r.Done), 10)
	if r.Status != 0 {
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(r.Status), 10)
	}
	if r.Error != "" {
		b = appendJSONField(b, "error", r.Error)
	}
	if len(r.Headers) > 0 {
		b = append(b, `,"headers":{`...)
		names := make([]string, 0, len(r.Headers))
		for n := range r.Headers {
			names = append(names, n)
		}
		slices.Sort(names) // encoding/json's order
		for i, n := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, n)
			b = append(b, ':')
			b = appendJSONString(b, r.Headers[n])
		}
		b = append(b, '}')
	}
	if r.Body != "" {
		b = appendJSONField(b, "body", r.Body)
	}
	return append(b, "}\n"...)
}

// appendJSONField appends `,"name":"value"` (name needs no escaping).
func appendJSONField(b []byte, name, value string) []byte {
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":`...)
	return appendJSONString(b, value)
}

// appendJSONString appends s as encoding/json writes it: as is when every
// byte is printable ASCII that it does not escape, else by encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
