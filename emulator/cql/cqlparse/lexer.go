// Package cqlparse parses the subset of CQL the emulator understands into a
// small statement AST. It is a hand-written tokenizer plus a recursive-descent
// parser: it never panics and always terminates on arbitrary input.
package cqlparse

import (
	"fmt"
	"strings"
)

// tokKind classifies a token.
type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQuotedIdent
	tString
	tNumber
	tDuration
	tBlob
	tUUID
	tSymbol
	tBind
	tNamedBind
)

type token struct {
	kind tokKind
	text string // identifiers lower-cased; strings unescaped; symbols as written
	raw  string // identifiers as written (for error messages)
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "EOF"
	case tString:
		return "'" + t.text + "'"
	case tQuotedIdent:
		return `"` + t.text + `"`
	}
	if t.raw != "" {
		return t.raw
	}
	return t.text
}

// lex splits src into tokens. Errors carry the byte offset.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	n := len(src)
	for i < n {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < n && src[i+1] == '-', c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment at position %d", i)
			}
			i += 2 + end + 2
		case c == '\'':
			start := i
			text, next, closed := quoted(src, i, '\'')
			if !closed {
				return nil, fmt.Errorf("unterminated string literal at position %d", start)
			}
			i = next
			toks = append(toks, token{kind: tString, text: text, pos: start})
		case c == '$' && i+1 < n && src[i+1] == '$':
			start := i
			end := strings.Index(src[i+2:], "$$")
			if end < 0 {
				return nil, fmt.Errorf("unterminated $$ string at position %d", start)
			}
			toks = append(toks, token{kind: tString, text: src[i+2 : i+2+end], pos: start})
			i += 2 + end + 2
		case c == '"':
			start := i
			text, next, closed := quoted(src, i, '"')
			if !closed {
				return nil, fmt.Errorf("unterminated quoted identifier at position %d", start)
			}
			i = next
			if text == "" {
				return nil, fmt.Errorf("empty quoted identifier at position %d", start)
			}
			toks = append(toks, token{kind: tQuotedIdent, text: text, pos: start})
		case isHex(c) && isUUIDAt(src, i):
			toks = append(toks, token{kind: tUUID, text: strings.ToLower(src[i : i+36]), pos: i})
			i += 36
		case c == '0' && i+1 < n && (src[i+1] == 'x' || src[i+1] == 'X'):
			start := i
			i += 2
			for i < n && isHex(src[i]) {
				i++
			}
			if i < n && isIdentChar(src[i]) {
				return nil, fmt.Errorf("invalid blob literal at position %d", start)
			}
			toks = append(toks, token{kind: tBlob, text: strings.ToLower(src[start+2 : i]), pos: start})
		case isDigit(c) && durationLen(src, i) > 0, c == 'P' && durationLen(src, i) > 0,
			c == '-' && durationLen(src, i+1) > 0:
			// cql3/Cql.g DURATION (duration_lex.go): 5s, 1y2mo, -3d, P1Y2D, P0001-02-03T04:05:06.
			start := i
			if c == '-' {
				i++
			}
			i += durationLen(src, i)
			toks = append(toks, token{kind: tDuration, text: src[start:i], pos: start})
		case isDigit(c):
			start := i
			for i < n && isDigit(src[i]) {
				i++
			}
			if i+1 < n && src[i] == '.' && isDigit(src[i+1]) {
				i++
				for i < n && isDigit(src[i]) {
					i++
				}
			}
			if i < n && (src[i] == 'e' || src[i] == 'E') {
				j := i + 1
				if j < n && (src[j] == '+' || src[j] == '-') {
					j++
				}
				if j < n && isDigit(src[j]) {
					i = j
					for i < n && isDigit(src[i]) {
						i++
					}
				}
			}
			toks = append(toks, token{kind: tNumber, text: src[start:i], pos: start})
		case isLetter(c):
			start := i
			for i < n && isIdentChar(src[i]) {
				i++
			}
			toks = append(toks, token{kind: tIdent, text: strings.ToLower(src[start:i]), raw: src[start:i], pos: start})
		case c == '?':
			toks = append(toks, token{kind: tBind, text: "?", pos: i})
			i++
		case c == ':' && i+1 < n && isLetter(src[i+1]):
			start := i
			i++
			for i < n && isIdentChar(src[i]) {
				i++
			}
			toks = append(toks, token{kind: tNamedBind, text: strings.ToLower(src[start+1 : i]), pos: start})
		default:
			start := i
			if i+1 < n {
				two := src[i : i+2]
				switch two {
				case "<=", ">=", "!=":
					toks = append(toks, token{kind: tSymbol, text: two, pos: start})
					i += 2
					continue
				}
			}
			if strings.IndexByte("(),;=<>{}[]:.*+-", c) >= 0 {
				toks = append(toks, token{kind: tSymbol, text: string(c), pos: start})
				i++
				continue
			}
			return nil, fmt.Errorf("unexpected character %q at position %d", c, start)
		}
	}
	toks = append(toks, token{kind: tEOF, pos: n})
	return toks, nil
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isHex(c byte) bool    { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isIdentChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_'
}

// isUUIDAt reports whether a canonical 8-4-4-4-12 UUID starts at src[i] and
// is not followed by an identifier character.
func isUUIDAt(src string, i int) bool {
	if i+36 > len(src) {
		return false
	}
	for j := 0; j < 36; j++ {
		c := src[i+j]
		switch j {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return i+36 == len(src) || !isIdentChar(src[i+36])
}

// quoted reads a string or identifier quoted with q starting at src[i] (the
// opening quote), where a doubled quote stands for one. It returns the text,
// the index after the closing quote, and whether a closing quote was found.
func quoted(src string, i int, q byte) (string, int, bool) {
	var sb strings.Builder
	n := len(src)
	for i++; i < n; i++ {
		if src[i] != q {
			sb.WriteByte(src[i])
			continue
		}
		if i+1 < n && src[i+1] == q {
			sb.WriteByte(q)
			i++
			continue
		}
		return sb.String(), i + 1, true
	}
	return sb.String(), n, false
}
