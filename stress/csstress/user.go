package csstress

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress"
)

// User is a `cassandra-stress user profile=… ops(…)` command line, parsed
// and handed over: the profile form (package stress/profile, spec
// "profile:…") builds the model, once the scenario loader has resolved
// Profile (a path, relative to the scenario file) and read it. The cs form
// itself never builds a model for a user command (see ParseUser).
type User struct {
	Profile string // profile= as written
	Ops     string // the inside of ops(...), e.g. "insert=1,read1=2"
	CL      gocql.Consistency
	// Threads and Rate are -rate threads= and fixed=/throttle= (RateGiven
	// false: the scenario's rate).
	Threads   int
	Rate      float64
	RateGiven bool
	Pop       string // -pop's parameters as given ("" = none): for the profile form to apply or refuse
	Insert    string // -insert's parameters as given ("" = none): likewise
	Notes     []string
}

// ErrUserCommand marks the error of a user command given to the cs form:
// it is the profile form's to build.
var ErrUserCommand = errors.New("the user command is built by the profile form")

// ParseUser parses a `cassandra-stress user …` command line.
func ParseUser(line string) (*User, error) {
	s, err := parseSettings(line)
	if err != nil {
		return nil, err
	}
	if s.user == nil {
		return nil, fmt.Errorf("stress_cmd: command %s is not user", s.command)
	}
	u := *s.user
	u.CL, u.Threads, u.Rate, u.RateGiven, u.Notes = s.cl, s.threads, s.rate, s.rateGiven, s.notes
	return &u, nil
}

// IsUser says whether line is a user command (a loader's cheap test before
// ParseUser; errors are ParseUser's to report).
func IsUser(line string) bool {
	g, err := tokenize(line)
	return err == nil && g[0].name == "user"
}

// parseUser reads the user command's parameters (SettingsCommandUser:
// profile=, ops(...), clustering=, and the common ones).
func (s *settings) parseUser(params []string) error {
	s.user = &User{}
	for _, p := range params {
		if done, err := s.commonParam(p); done {
			if err != nil {
				return err
			}
			continue
		}
		lp := strings.ToLower(p)
		switch {
		case strings.HasPrefix(lp, "profile="):
			s.user.Profile = p[len("profile="):]
			if strings.Contains(s.user.Profile, ",") {
				return unsupported("profile="+s.user.Profile, "one profile per workload: several profiles with specname-qualified ops are not supported")
			}
		case strings.HasPrefix(lp, "ops(") && strings.HasSuffix(p, ")"):
			s.user.Ops = p[len("ops(") : len(p)-1]
		case strings.HasPrefix(lp, "clustering="):
			return unsupported("clustering=", "runs of operations of one kind: every operation's kind is drawn independently here, by its ratio")
		default:
			return fmt.Errorf("stress_cmd: user: parameter %q is not supported (want profile=, ops(...), n=, duration=, cl=, no-warmup)", p)
		}
	}
	if s.user.Profile == "" || s.user.Ops == "" {
		return fmt.Errorf("stress_cmd: user needs profile=FILE and ops(name=ratio,...)")
	}
	return nil
}

// userOption keeps an option the profile form applies (-insert, -pop).
func (s *settings) userOption(g group) error {
	switch g.name {
	case "-insert":
		s.user.Insert = strings.Join(g.params, " ")
	case "-pop":
		s.user.Pop = strings.Join(g.params, " ")
	}
	return nil
}

// userError is what the cs form answers for a user command: the profile
// must be read where the scenario is (its path is relative to the scenario
// file, and a spec must carry the YAML itself), so the scenario loader
// reads a user workload.stress_cmd (or workload.profile and workload.ops)
// and builds the profile form's spec.
func userError(u *User) error {
	registered := false
	for _, f := range stress.ModelForms() {
		registered = registered || f == "profile"
	}
	if !registered {
		return fmt.Errorf("stress_cmd: user profile=%s: %w, which is not registered in this build (import package stress/models)", u.Profile, ErrUserCommand)
	}
	return fmt.Errorf("stress_cmd: user profile=%s: %w: give the line as a scenario's workload.stress_cmd (the scenario loader reads the profile, relative to the scenario file) or as workload.profile: %s and workload.ops: %q", u.Profile, ErrUserCommand, u.Profile, u.Ops)
}
