package csstress

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress/csdist"
)

// Operation kinds of the predefined commands (cassandra-stress Command).
const (
	kindWrite        = "write"
	kindRead         = "read"
	kindCounterWrite = "counter_write"
	kindCounterRead  = "counter_read"
)

// commandNames maps every name cassandra-stress accepts for a command
// (Command: its name, the name without '_', and the extra alias) to the
// command.
var commandNames = map[string]string{
	"write": kindWrite, "insert": kindWrite,
	"read":          kindRead,
	"mixed":         "mixed",
	"counter_write": kindCounterWrite, "counterwrite": kindCounterWrite, "counter_add": kindCounterWrite, "counteradd": kindCounterWrite,
	"counter_read": kindCounterRead, "counterread": kindCounterRead, "counter_get": kindCounterRead, "counterget": kindCounterRead,
	"user": "user",
}

// opWeight is one operation of the mix.
type opWeight struct {
	kind   string
	weight float64
}

// settings is a parsed command line: what the predefined commands need.
type settings struct {
	command string // write, read, mixed, counter_write, counter_read, user
	mix     []opWeight
	cl      gocql.Consistency
	clGiven bool
	keysize int
	add     csdist.Dist // counter increments (SettingsCommandPreDefined add=)

	threads     int
	rate        float64
	rateGiven   bool
	pop         population
	colNames    []string
	size        csdist.Dist
	timestamp   string // -col timestamp=: USING TIMESTAMP
	schema      schemaOptions
	user        *User
	notes       []string
	seenOptions map[string]bool
}

// population is -pop: a sequence (seq=A..B) or a distribution (dist=D) of
// population indexes; neither given: the scenario's keys.
type population struct {
	given bool
	seq   bool
	dist  csdist.Dist // seq: kind "seq" over A..B
}

// schemaOptions is -schema (SettingsSchema).
type schemaOptions struct {
	keyspace     string
	strategy     string      // "" = the scenario's NetworkTopologyStrategy
	replication  [][2]string // the strategy's options as given (factor= as replication_factor)
	compression  string
	compaction   string
	compactionKV [][2]string
}

func (s *settings) note(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// unsupported is the error for an option that cannot be honoured.
func unsupported(option, why string) error {
	return fmt.Errorf("stress_cmd: option %s is not supported (%s)", option, why)
}

// invalid is the error for an option whose value is malformed.
func invalid(option, value, want string) error {
	return fmt.Errorf("stress_cmd: option %s: %q is invalid: want %s", option, value, want)
}

var (
	durationRE = regexp.MustCompile(`^[0-9]+[smhSMH]$`)    // SettingsCommand.Duration's duration=
	ratioRE    = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`) // OptionEnumProbabilities' values
)

// consistencies are SettingsCommand's cl= values.
var consistencies = "ONE|QUORUM|LOCAL_QUORUM|EACH_QUORUM|ALL|ANY|TWO|THREE|LOCAL_ONE|SERIAL|LOCAL_SERIAL"

func parseCL(v string) (gocql.Consistency, error) {
	u := strings.ToUpper(v)
	for _, c := range strings.Split(consistencies, "|") {
		if u == c {
			return gocql.ParseConsistencyWrapper(u)
		}
	}
	return 0, invalid("cl=", v, "one of "+consistencies)
}

// parseSettings parses a whole command line.
func parseSettings(line string) (*settings, error) {
	groups, err := tokenize(line)
	if err != nil {
		return nil, fmt.Errorf("stress_cmd: %w", err)
	}
	s := &settings{cl: gocql.LocalOne, keysize: 10, seenOptions: map[string]bool{}}
	if err := s.parseCommand(groups[0]); err != nil {
		return nil, err
	}
	for _, g := range groups[1:] {
		s.seenOptions[g.name] = true
		if err := s.parseOption(g); err != nil {
			return nil, err
		}
	}
	return s, s.finish()
}

// parseOption dispatches one -option group.
func (s *settings) parseOption(g group) error {
	switch g.name {
	case "-rate":
		return s.parseRate(g.params)
	case "-pop":
		if s.command == "user" {
			return s.userOption(g)
		}
		return s.parsePop(g.params)
	case "-col":
		if s.command == "user" {
			return unsupported("-col", "a user profile's columnspec defines its columns")
		}
		return s.parseCol(g.params)
	case "-schema":
		return s.parseSchema(g.params)
	case "-mode":
		return s.parseMode(g.params)
	case "-node":
		s.note("-node %s gives way to the cluster: operations go to the scenario's nodes", strings.Join(g.params, " "))
		return nil
	case "-port":
		return s.parsePort(g.params)
	case "-log":
		return s.parseLog(g.params)
	case "-errors":
		return s.parseErrors(g.params)
	case "-insert":
		if s.command == "user" {
			return s.userOption(g)
		}
		return unsupported("-insert", "it applies to user profiles only (SettingsInsert: partitions, batchtype, select-ratio of a profile's insert)")
	}
	return refusedOption(g.name)
}

// refusedOption names why a known cassandra-stress option is refused.
func refusedOption(name string) error {
	why := map[string]string{
		"-graph":      "elasticity writes its own report; cassandra-stress's HTML graph is not produced",
		"-sendto":     "there is no stress daemon; loaders are the scenario's",
		"-send-to":    "there is no stress daemon; loaders are the scenario's",
		"-transport":  "TLS and transport factories are the cluster's connection settings, not the workload's",
		"-tokenrange": "token-range scans belong to user profiles' queries, not to the predefined commands",
		"-cloudconf":  "the cluster's connection is the scenario's",
		"-?":          "help is not a workload",
	}[name]
	if why == "" {
		why = "not a cassandra-stress option elasticity knows"
	}
	return unsupported(name, why)
}

// parseCommand reads the command and its parameters (SettingsCommand and
// its PreDefined, PreDefinedMixed and User subclasses).
func (s *settings) parseCommand(g group) error {
	cmd, ok := commandNames[g.name]
	if !ok {
		return fmt.Errorf("stress_cmd: command %q is not supported (want write, read, mixed, counter_write, counter_read or user)", g.name)
	}
	s.command = cmd
	if cmd == "user" {
		return s.parseUser(g.params)
	}
	if cmd != "mixed" {
		s.mix = []opWeight{{kind: cmd, weight: 1}}
	}
	for _, p := range g.params {
		if err := s.commandParam(p); err != nil {
			return err
		}
	}
	if cmd == "mixed" && s.mix == nil {
		// SettingsCommandPreDefinedMixed: read and write default to 1 each.
		s.mix = []opWeight{{kind: kindWrite, weight: 1}, {kind: kindRead, weight: 1}}
	}
	return nil
}

// commandParam reads one parameter of a predefined command.
func (s *settings) commandParam(p string) error {
	if done, err := s.commonParam(p); done {
		return err
	}
	name, value, _ := strings.Cut(p, "=")
	switch strings.ToLower(name) {
	case "keysize":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 1024 {
			return invalid("keysize=", value, "a key size in bytes, 1 to 1024 (default 10)")
		}
		s.keysize = n
		return nil
	case "add":
		d, err := csdist.Parse(value)
		if err != nil || d.Kind() == csdist.KindSeq {
			return invalid("add=", value, "a distribution of counter increments such as FIXED(1) or UNIFORM(1..10)")
		}
		s.add = d
		return nil
	case "clustering":
		if s.command == "mixed" {
			return unsupported("clustering=", "runs of operations of one kind: every operation's kind is drawn independently here, by its ratio")
		}
	}
	if s.command == "mixed" && strings.HasPrefix(strings.ToLower(p), "ratio(") {
		return s.parseRatio(p)
	}
	want := "n=, duration=, cl=, no-warmup, truncate=never, keysize=, add="
	if s.command == "mixed" {
		want += ", ratio(...)"
	}
	return fmt.Errorf("stress_cmd: %s: parameter %q is not supported (want %s)", s.command, p, want)
}

// commonParam reads the parameters every command takes (SettingsCommand.Options
// and Count/Duration/Uncertainty); done is false for any other parameter.
func (s *settings) commonParam(p string) (done bool, err error) {
	name, value, hasValue := strings.Cut(p, "=")
	switch lname := strings.ToLower(name); {
	case lname == "n" && hasValue:
		if _, err := csdist.ParseLong(value); err != nil {
			return true, invalid("n=", value, "a number of operations such as 1000000 or 10m")
		}
		s.note("n=%s gives way to the scenario's phases: they decide how long each step runs", value)
	case lname == "duration" && hasValue:
		if !durationRE.MatchString(value) {
			return true, invalid("duration=", value, "a number with s, m or h")
		}
		s.note("duration=%s gives way to the scenario's phases: they decide how long each step runs", value)
	case strings.HasPrefix(lname, "err<") || strings.HasPrefix(lname, "n>") || strings.HasPrefix(lname, "n<"):
		return true, unsupported(p, "running until the error of the mean converges: the scenario's phases decide how long a step runs")
	case lname == "no-warmup" && !hasValue:
		s.note("no-warmup: elasticity runs no cassandra-stress warm-up; the scenario's phases decide what runs before measured steps")
	case lname == "truncate" && hasValue:
		if !strings.EqualFold(value, "never") {
			return true, unsupported("truncate="+value, "truncating the tables would drop the data the scenario filled")
		}
	case lname == "cl" && hasValue:
		cl, err := parseCL(value)
		s.cl, s.clGiven = cl, true
		return true, err
	case lname == "serial-cl" && hasValue:
		if !strings.EqualFold(value, "SERIAL") && !strings.EqualFold(value, "LOCAL_SERIAL") {
			return true, invalid("serial-cl=", value, "SERIAL or LOCAL_SERIAL")
		}
		if s.command != "user" {
			s.note("serial-cl=%s has no effect: the predefined commands make no conditional writes", value)
		}
	default:
		return false, nil
	}
	return true, nil
}

// parseRatio reads mixed's ratio(write=N,read=M,...) (OptionEnumProbabilities
// over the basic commands; only those given take part).
func (s *settings) parseRatio(p string) error {
	if !strings.HasSuffix(p, ")") || len(p) <= len("ratio()") {
		return invalid("ratio(...)", p, "ratio(write=N,read=M) with counter_write= and counter_read= too")
	}
	inner := p[len("ratio(") : len(p)-1]
	s.mix = nil
	seen := map[string]bool{}
	total := 0.0
	for _, kv := range strings.Split(inner, ",") {
		name, value, _ := strings.Cut(kv, "=")
		kind := strings.ToLower(name)
		if kind != kindWrite && kind != kindRead && kind != kindCounterWrite && kind != kindCounterRead {
			return invalid("ratio(...)", kv, "write=, read=, counter_write= or counter_read= with a number")
		}
		w, err := strconv.ParseFloat(value, 64)
		if err != nil || w < 0 || !ratioRE.MatchString(value) {
			return invalid("ratio(...)", kv, "a non-negative number such as 1 or 2.5")
		}
		if seen[kind] {
			return invalid("ratio(...)", kv, "each operation once")
		}
		seen[kind] = true
		total += w
		if w > 0 {
			s.mix = append(s.mix, opWeight{kind: kind, weight: w})
		}
	}
	if total == 0 {
		return invalid("ratio(...)", p, "at least one operation with a non-zero ratio")
	}
	return nil
}

// finish applies cassandra-stress's defaults and checks what depends on
// several options.
func (s *settings) finish() error {
	if !s.clGiven {
		s.note("no cl=: cassandra-stress's default consistency LOCAL_ONE applies, not the scenario's")
	}
	if !s.seenOptions["-rate"] {
		s.note("no -rate: the scenario's rate and concurrency apply (cassandra-stress's default searches for a saturating thread count, -rate auto, or runs write and counter_write n=… with 200 threads)")
	}
	if s.command == "user" {
		return nil
	}
	if s.size.IsZero() {
		s.size, _ = csdist.Parse("FIXED(34)") // SettingsColumn: size= defaults to FIXED(34)
	}
	if s.colNames == nil {
		s.colNames = countNames(5) // SettingsColumn: n= defaults to FIXED(5)
	}
	if s.add.IsZero() {
		s.add, _ = csdist.Parse("fixed(1)") // SettingsCommandPreDefined: add= defaults to fixed(1)
	}
	if _, hi := s.pop.dist.Bounds(); s.pop.given && hi > maxIndex(s.keysize) {
		return invalid("-pop", s.pop.dist.Text(), fmt.Sprintf("indexes up to %d: keysize=%d keys hold %d distinct hex digits", maxIndex(s.keysize), s.keysize, min(s.keysize, 16)))
	}
	if s.pop.given {
		what := "dist=" + s.pop.dist.Text()
		if s.pop.seq && !strings.HasPrefix(strings.ToLower(s.pop.dist.Text()), "seq(") {
			what = "seq=" + s.pop.dist.Text()
		}
		s.note("-pop %s: operations address these population indexes whatever the scenario's fill wrote (the fill writes indexes 1..rows)", what)
	} else {
		s.note("no -pop: operations address the rows the scenario filled (population indexes 1..rows), drawn with the scenario's key distribution; writes without a fill add indexes 1, 2, 3 ...")
	}
	return nil
}
