package results

import (
	"bytes"
	"strconv"
	"time"
)

// parseLatencyLine is a fast path for latency.jsonl lines as JSONLWriter
// writes them: encoding/json spends a third of a long report's time
// validating and scanning the two ~1 kB histogram strings. It reports false
// for anything unusual (escapes, nulls, odd keys, bad numbers), and the
// caller then decodes the line with encoding/json, which has the final word.
func parseLatencyLine(b []byte, d *latencyLine) bool {
	s := scanner{b: b}
	if !s.lit('{') {
		return false
	}
	if s.lit('}') {
		return s.end()
	}
	for {
		key, ok := s.str()
		if !ok || !s.lit(':') {
			return false
		}
		switch string(key) {
		case "start", "end":
			v, ok := s.str()
			if !ok {
				return false
			}
			t, err := time.Parse(time.RFC3339Nano, string(v))
			if err != nil {
				return false
			}
			if key[0] == 's' {
				d.Start = t
			} else {
				d.End = t
			}
		case "op":
			v, ok := s.str()
			if !ok {
				return false
			}
			d.Op = string(v)
		case "class":
			v, ok := s.str()
			if !ok {
				return false
			}
			d.Class = string(v)
		case "source":
			v, ok := s.str()
			if !ok {
				return false
			}
			d.Source = string(v)
		case "loader_lag_ms":
			f, ok := s.float()
			if !ok {
				return false
			}
			d.LoaderLagMS = f
		case "count", "dropped":
			n, ok := s.int()
			if !ok {
				return false
			}
			if key[0] == 'c' {
				d.Count = n
			} else {
				d.Dropped = n
			}
		case "errors":
			if !s.lit('{') {
				return false
			}
			d.Errors = map[string]int64{} // as encoding/json: {} is an empty map, not nil
			if !s.lit('}') {
				for {
					k, ok := s.str()
					if !ok || !s.lit(':') {
						return false
					}
					n, ok := s.int()
					if !ok {
						return false
					}
					d.Errors[string(k)] = n
					if s.lit('}') {
						break
					}
					if !s.lit(',') {
						return false
					}
				}
			}
		case "response":
			if !s.lit('{') {
				return false
			}
			if !s.lit('}') {
				for {
					k, ok := s.str()
					if !ok || !s.lit(':') {
						return false
					}
					f, ok := s.float()
					if !ok {
						return false
					}
					switch string(k) {
					case "p50_ms":
						d.Response.P50 = f
					case "p90_ms":
						d.Response.P90 = f
					case "p99_ms":
						d.Response.P99 = f
					case "p999_ms":
						d.Response.P999 = f
					case "max_ms":
						d.Response.Max = f
					case "mean_ms":
						d.Response.Mean = f
					default:
						return false
					}
					if s.lit('}') {
						break
					}
					if !s.lit(',') {
						return false
					}
				}
			}
		case "response_hdr":
			v, ok := s.str()
			if !ok {
				return false
			}
			d.hdr, d.ResponseHDR = v, ""
		default:
			// encoding/json matches keys case-insensitively: leave those to it.
			for _, k := range []string{"start", "end", "op", "source", "count", "dropped", "errors", "response", "response_hdr", "loader_lag_ms"} {
				if bytes.EqualFold(key, []byte(k)) {
					return false
				}
			}
			if !s.skip(0) {
				return false
			}
		}
		if s.lit('}') {
			return s.end()
		}
		if !s.lit(',') {
			return false
		}
	}
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) lit(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// str reads a string without escapes.
func (s *scanner) str() ([]byte, bool) {
	if !s.lit('"') {
		return nil, false
	}
	start := s.i
	if j := bytes.IndexByte(s.b[start:], '"'); j >= 0 {
		v := s.b[start : start+j]
		for _, c := range v {
			if c == '\\' || c < 0x20 {
				return nil, false
			}
		}
		s.i = start + j + 1
		return v, true
	}
	return nil, false
}

func (s *scanner) number() []byte {
	s.ws()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			s.i++
			continue
		}
		break
	}
	return s.b[start:s.i]
}

func (s *scanner) int() (int64, bool) {
	v := s.number()
	if !jsonNumber(v) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

func (s *scanner) float() (float64, bool) {
	v := s.number()
	if !jsonNumber(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// jsonNumber checks the JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(v []byte) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(v) && v[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(v)
}

// skip skips one value of any kind.
func (s *scanner) skip(depth int) bool {
	if depth > 32 {
		return false
	}
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		s.i++
		if s.lit(closer) {
			return true
		}
		for {
			if c == '{' {
				if _, ok := s.str(); !ok || !s.lit(':') {
					return false
				}
			}
			if !s.skip(depth + 1) {
				return false
			}
			if s.lit(closer) {
				return true
			}
			if !s.lit(',') {
				return false
			}
		}
	case c == 't' || c == 'f' || c == 'n':
		for _, w := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(s.b[s.i:], []byte(w)) {
				s.i += len(w)
				return true
			}
		}
		return false
	default:
		_, ok := s.float()
		return ok
	}
}
