package cqlparse

import "strings"

// The DURATION token of cql3/Cql.g, matched as ANTLR's lexer matches it:
//
//	DURATION : '-'? DIGIT+ DURATION_UNIT (DIGIT+ DURATION_UNIT)*
//	         | '-'? 'P' (DIGIT+ 'Y')? (DIGIT+ 'M')? (DIGIT+ 'D')? ('T' (DIGIT+ 'H')? (DIGIT+ 'M')? (DIGIT+ 'S')?)?
//	         | '-'? 'P' DIGIT+ 'W'
//	         | '-'? 'P' DIGIT{4} '-' DIGIT{2} '-' DIGIT{2} 'T' DIGIT{2} ':' DIGIT{2} ':' DIGIT{2}
//
// The unit form is case-insensitive (DURATION_UNIT is built of the
// case-insensitive letter fragments); the ISO 8601 forms are not. Where
// DURATION and IDENT match the same length DURATION wins (it is defined
// first); where IDENT matches more (P1y2D, P2Y3W) the text is an identifier.

// durationUnits are DURATION_UNIT's alternatives, longest first so that
// "ms" is milliseconds and "mo" months rather than minutes. Cql.g lists
// '\u00B5' S too, but ScyllaDB's lexer reads bytes, so a literal 1µs is
// refused (scylladb issue #8001, an xfail in test/cqlpy
// test_type_duration.py); the string '1µs' parses (types/duration.cc).
var durationUnits = []string{"mo", "ms", "us", "ns", "y", "w", "d", "h", "m", "s"}

// unitDurationLen is the length of the unit form starting at src[i], or 0.
func unitDurationLen(src string, i int) int {
	j := i
	for {
		k := j
		for k < len(src) && isDigit(src[k]) {
			k++
		}
		if k == j {
			break
		}
		u := unitAt(src, k)
		if u == 0 {
			break
		}
		j = k + u
	}
	return j - i
}

func unitAt(src string, k int) int {
	rest := strings.ToLower(src[k:min(len(src), k+3)])
	for _, u := range durationUnits {
		if strings.HasPrefix(rest, u) {
			return len(u)
		}
	}
	return 0
}

// isoDurationLen is the length of the longest ISO 8601 form starting at
// src[i] (which holds 'P'), or 0.
func isoDurationLen(src string, i int) int {
	if i >= len(src) || src[i] != 'P' {
		return 0
	}
	return max(designatorsLen(src, i+1), weeksLen(src, i+1), alternativeLen(src, i+1)) + 1
}

// designatorsLen matches (DIGIT+ 'Y')? (DIGIT+ 'M')? (DIGIT+ 'D')? ('T' ...)? after the P.
func designatorsLen(src string, i int) int {
	j := i
	for _, d := range "YMD" {
		j += numberThen(src, j, byte(d))
	}
	if j < len(src) && src[j] == 'T' {
		j++
		for _, d := range "HMS" {
			j += numberThen(src, j, byte(d))
		}
	}
	return j - i
}

func weeksLen(src string, i int) int { return numberThen(src, i, 'W') }

// alternativeLen matches DIGIT{4}-DIGIT{2}-DIGIT{2}TDIGIT{2}:DIGIT{2}:DIGIT{2} after the P.
func alternativeLen(src string, i int) int {
	const shape = "dddd-dd-ddTdd:dd:dd"
	if i+len(shape) > len(src) {
		return 0
	}
	for k := 0; k < len(shape); k++ {
		c := src[i+k]
		if shape[k] == 'd' && !isDigit(c) || shape[k] != 'd' && c != shape[k] {
			return 0
		}
	}
	return len(shape)
}

// numberThen is the length of DIGIT+ followed by the designator d at src[i], or 0.
func numberThen(src string, i int, d byte) int {
	k := i
	for k < len(src) && isDigit(src[k]) {
		k++
	}
	if k == i || k >= len(src) || src[k] != d {
		return 0
	}
	return k + 1 - i
}

// identLen is the length of an IDENT starting at src[i].
func identLen(src string, i int) int {
	j := i
	for j < len(src) && isIdentChar(src[j]) {
		j++
	}
	return j - i
}

// durationLen is the length of a DURATION token at src[i] (after an
// optional '-'), or 0 where the text lexes as something else.
func durationLen(src string, i int) int {
	if i >= len(src) {
		return 0
	}
	if isDigit(src[i]) {
		return unitDurationLen(src, i)
	}
	if n := isoDurationLen(src, i); n > 1 && n >= identLen(src, i) {
		return n
	}
	return 0
}
