package scenarios

import (
	"testing"
)

const withGrow = minimal + "nemesis:\n  - grow_cluster: {name: grow}\n  - hook: {name: notify, command: 'true'}\n"

// Every key of issue 19's verdicts is validated like the rest: file:line,
// field path, did-you-mean.
func TestVerdictKeysBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		sets      []string
		line      int
		path, msg string
	}{
		{"recovery intervals zero", minimal + "thresholds:\n  recovery:\n    intervals: 0\n", nil, 4, "thresholds.recovery.intervals", "within 1..3600"},
		{"recovery intervals text", minimal + "thresholds:\n  recovery:\n    intervals: many\n", nil, 4, "thresholds.recovery.intervals", "expected an integer"},
		{"recovery misspelt", minimal + "thresholds:\n  recovery:\n    interval: 5\n", nil, 4, "thresholds.recovery.interval", `did you mean "intervals"`},
		{"recovery by --set", minimal, []string{"thresholds.recovery.intervals=-2"}, 0, "thresholds.recovery.intervals", "within 1..3600"},
		{"baseline misspelt", minimal + "thresholds:\n  basline: {}\n", nil, 3, "thresholds.basline", `did you mean "baseline"`},
		{"baseline rule misspelt", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99_ms: {bets_pct: 10}\n", nil, 5, "thresholds.baseline.cycles.0.read_p99_ms.bets_pct", `did you mean "best_pct"`},
		{"baseline metric misspelt", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99: {best_pct: 10}\n", nil, 5, "thresholds.baseline.cycles.0.read_p99", `did you mean "read_p99_ms"`},
		{"baseline rule empty", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99_ms: {}\n", nil, 5, "thresholds.baseline.cycles.0.read_p99_ms", "sets no limit (best_pct, best_abs, fixed_limit)"},
		{"baseline entry empty", minimal + "thresholds:\n  baseline:\n    cycles:\n      - cycle: nemesis\n", nil, 5, "thresholds.baseline.cycles.0", "sets no rule"},
		{"baseline negative pct", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99_ms:\n          best_pct: -5\n", nil, 6, "thresholds.baseline.cycles.0.read_p99_ms.best_pct", "must be >= 0"},
		{"baseline throughput pct", minimal + "thresholds:\n  baseline:\n    cycles:\n      - total_ops_per_sec: {best_pct: 100}\n", nil, 5, "thresholds.baseline.cycles.0.total_ops_per_sec.best_pct", "below 100 for a throughput"},
		{"baseline pct not a number", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99_ms: {best_pct: lots}\n", nil, 5, "thresholds.baseline.cycles.0.read_p99_ms.best_pct", "expected a number"},
		{"baseline fixed zero", minimal + "thresholds:\n  baseline:\n    cycles:\n      - read_p99_ms: {fixed_limit: 0}\n", nil, 5, "thresholds.baseline.cycles.0.read_p99_ms.fixed_limit", "must be > 0"},
		{"baseline bad cycle", minimal + "thresholds:\n  baseline:\n    cycles:\n      - cycle: cycle1\n        read_p99_ms: {best_pct: 5}\n", nil, 5, "thresholds.baseline.cycles.0.cycle", "is not \"*\", steady_state"},
		{"baseline unknown duration", minimal + "thresholds:\n  baseline:\n    durations:\n      \"Data balance\": {best_pct: 5}\n", nil, 5, "thresholds.baseline.durations.Data balance", `did you mean "Data balanced"`},
		{"baseline duration not a rule", minimal + "thresholds:\n  baseline:\n    durations:\n      \"Data balanced\": 5m\n", nil, 5, "thresholds.baseline.durations.Data balanced", "expected a mapping"},
		{"baseline durations list", minimal + "thresholds:\n  baseline:\n    durations: [a]\n", nil, 4, "thresholds.baseline.durations", "expected a mapping of duration names to rules"},
		{"plan factor bad", minimal + "thresholds:\n  durations:\n    \"New node(s) ready\": fastx plan\n", nil, 4, "thresholds.durations.New node(s) ready", "invalid multiple of the plan"},
		{"plan factor zero", minimal + "thresholds:\n  durations:\n    \"New node(s) ready\": 0x plan\n", nil, 4, "thresholds.durations.New node(s) ready", "want a positive number"},
		{"plan factor on a hook", withGrow + "thresholds:\n  durations:\n    notify: 2x plan\n", nil, 7, "thresholds.durations.notify", "has no plan estimate"},
		{"duration misspelt", minimal + "thresholds:\n  durations:\n    \"New node ready\": 1.5x plan\n", nil, 4, "thresholds.durations.New node ready", `did you mean "New node(s) ready"`},
		{"plan factor by --set", minimal, []string{`thresholds.durations={"Data balanced": "-1x plan"}`}, 0, "thresholds.durations.Data balanced", "invalid multiple of the plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectProblem(t, problemsOf(t, tc.src, tc.sets...), tc.sets, tc.line, tc.path, tc.msg)
		})
	}
}
