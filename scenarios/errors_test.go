package scenarios

import (
	"strings"
	"testing"
)

// expected_errors and severities are validated like every key: file:line and did-you-mean.
func TestExpectedErrorsValidation(t *testing.T) {
	cases := []struct {
		name string
		src  string
		sets []string
		line int
		path string
		msg  string
	}{
		{"type typo", minimal + "expected_errors:\n  - type: NO_SPACE_EROR\n", nil, 3, "expected_errors.0.type", `did you mean "NO_SPACE_ERROR"`},
		{"neither", minimal + "expected_errors:\n  - max_count: 3\n", nil, 3, "expected_errors.0", "needs a type or a regex"},
		{"bad regex", minimal + "expected_errors:\n  - regex: 'a('\n", nil, 3, "expected_errors.0.regex", "not a regular expression"},
		{"unknown during", minimal + "expected_errors:\n  - type: NO_SPACE_ERROR\n    during: Add 3 x nodes\n", nil, 4, "expected_errors.0.during", "not a nemesis step, cycle or phase"},
		{"negative max", minimal + "expected_errors:\n  - type: BAD_ALLOC\n    max_count: -1\n", nil, 4, "expected_errors.0.max_count", ">= 0"},
		{"unknown key", minimal + "expected_errors:\n  - typ: BAD_ALLOC\n", nil, 3, "expected_errors.0.typ", `did you mean "type"`},
		{"severity value", minimal + "severities:\n  NO_SPACE_ERROR: WARN\n", nil, 3, "severities.NO_SPACE_ERROR", "not one of"},
		{"severity type", minimal + "severities:\n  NO_SPACE: WARNING\n", nil, 3, "severities.NO_SPACE", `did you mean "NO_SPACE_ERROR"`},
		{"fill by", minimal + "dataset:\n  fill:\n    - target_percent: 50%\n      by: mean\n", nil, 5, "dataset.fill.0.by", "not one of max, average"},
		{"set bad regex", minimal, []string{`expected_errors=[{regex: "a("}]`}, 0, "expected_errors.0.regex", "not a regular expression"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := problemsOf(t, c.src, c.sets...)
			for _, p := range ps {
				if p.Path == c.path && strings.Contains(p.Msg, c.msg) && (c.line == 0 || p.Line == c.line) {
					return
				}
			}
			t.Fatalf("want %s at line %d: %q; got %+v", c.path, c.line, c.msg, ps)
		})
	}
}
