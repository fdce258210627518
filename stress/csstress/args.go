package csstress

import (
	"fmt"
	"regexp"
	"strings"
)

// shellSplit splits a command line as a POSIX shell would (SCT's stress_cmd
// lines quote groups: -schema 'replication(factor=3)', ops'(insert=1)',
// -rate 'threads=50 fixed=100/s'): single quotes are literal, double quotes
// allow \" and \\, a backslash outside quotes escapes the next character.
func shellSplit(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote at column %d", i+1)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case c == '"':
			j, err := doubleQuoted(line, i+1, &cur)
			if err != nil {
				return nil, err
			}
			i, inWord = j, true
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(line[i+1])
			i, inWord = i+1, true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// doubleQuoted copies a double-quoted string starting at from into cur and
// returns the index of its closing quote.
func doubleQuoted(line string, from int, cur *strings.Builder) (int, error) {
	for i := from; i < len(line); i++ {
		switch c := line[i]; {
		case c == '"':
			return i, nil
		case c == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`+"`", line[i+1]) >= 0:
			cur.WriteByte(line[i+1])
			i++
		default:
			cur.WriteByte(c)
		}
	}
	return 0, fmt.Errorf("unterminated double quote at column %d", from)
}

var (
	spaceBeforeRE = regexp.MustCompile(`\s+([,=()])`)
	spaceAfterRE  = regexp.MustCompile(`([,=(])\s+`)
	spacesRE      = regexp.MustCompile(` +`)
)

// repairParams mirrors StressSettings.repairParams: the words are joined
// with spaces, spaces around , = ( and after ( are removed, and the result
// is split on spaces again (so "-rate 'threads=50 fixed=100/s'" is two
// parameters, and "ratio(write=1, read=2)" one).
func repairParams(words []string) []string {
	s := strings.Join(words, " ")
	s = spaceBeforeRE.ReplaceAllString(s, "$1")
	s = spaceAfterRE.ReplaceAllString(s, "$1")
	var out []string
	for _, w := range spacesRE.Split(s, -1) {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// group is one command or -option with its parameters, in command-line order.
type group struct {
	name   string // lower-cased, as StressSettings.parseMap keys them
	params []string
}

// splitGroups mirrors StressSettings.parseMap: the first word is the
// command, every word starting with '-' starts an option, and the words up
// to the next option are its parameters. A repeated option is an error
// (putParam: "defined multiple times").
func splitGroups(words []string) ([]group, error) {
	var out []group
	seen := map[string]bool{}
	for i, w := range words {
		if i == 0 || strings.HasPrefix(w, "-") {
			name := strings.ToLower(w)
			if seen[name] {
				return nil, fmt.Errorf("%s is given twice (cassandra-stress takes each option at most once)", name)
			}
			seen[name] = true
			out = append(out, group{name: name})
			continue
		}
		out[len(out)-1].params = append(out[len(out)-1].params, w)
	}
	return out, nil
}

// tokenize turns a stress_cmd line into its command and option groups. A
// leading "cassandra-stress" (or a path ending in it) is dropped.
func tokenize(line string) ([]group, error) {
	words, err := shellSplit(line)
	if err != nil {
		return nil, err
	}
	if len(words) > 0 && (words[0] == "cassandra-stress" || strings.HasSuffix(words[0], "/cassandra-stress")) {
		words = words[1:]
	}
	words = repairParams(words)
	if len(words) == 0 {
		return nil, fmt.Errorf("no command (want write, read, mixed, counter_write, counter_read or user)")
	}
	return splitGroups(words)
}
