package csstress

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/stress/csdist"
)

var ratePerSecRE = regexp.MustCompile(`^([0-9]+)/s$`)

// parseRate reads -rate threads=N [fixed=R/s | throttle=R/s] (SettingsRate
// ThreadOptions). The auto options (threads>=, threads<=, auto) search for
// a saturating thread count: refused.
func (s *settings) parseRate(params []string) error {
	var fixed, throttle string
	for _, p := range params {
		name, value, _ := strings.Cut(p, "=")
		switch strings.ToLower(name) {
		case "threads":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return invalid("-rate threads=", value, "a positive number of clients")
			}
			s.threads = n
		case "fixed", "throttle":
			if !ratePerSecRE.MatchString(value) {
				return invalid("-rate "+strings.ToLower(name)+"=", value, "a whole number of operations per second such as 150/s")
			}
			if strings.EqualFold(name, "fixed") {
				fixed = value
			} else {
				throttle = value
			}
		default:
			if strings.HasPrefix(p, "threads>") || strings.HasPrefix(p, "threads<") || strings.EqualFold(p, "auto") {
				return unsupported("-rate "+p, "the auto mode searches for the thread count that saturates the cluster; here the scenario's phases set the load: give threads=N and fixed=R/s")
			}
			return invalid("-rate", p, "threads=N with fixed=R/s or throttle=R/s")
		}
	}
	if s.threads == 0 {
		return invalid("-rate", strings.Join(params, " "), "threads=N (SettingsRate requires it with fixed= and throttle=)")
	}
	f, _ := rateValue(fixed)
	t, _ := rateValue(throttle)
	if f != 0 && t != 0 { // SettingsRate: "can't have both fixed and throttle set, choose one."
		return invalid("-rate", strings.Join(params, " "), "fixed= or throttle=, not both")
	}
	switch {
	case f > 0:
		s.rate, s.rateGiven = f, true
		s.note("-rate fixed=%s is an arrival rate here: operations are intended at %s whatever came before, latency measured from the intended start (coordinated-omission corrected) with at most threads=%d in flight; an operation that cannot start within the scheduler's lag bound is dropped and counted, where cassandra-stress's closed-loop threads fall behind without bound", fixed, fixed, s.threads)
	case t > 0:
		s.rate, s.rateGiven = t, true
		s.note("-rate throttle=%s runs as the same arrival rate as fixed= here (cassandra-stress's throttle is a maximum with no implied schedule and reports service time; here both response and service time are recorded)", throttle)
	default:
		s.note("-rate threads=%d without fixed= or throttle=: cassandra-stress runs closed-loop at full speed; here the scenario's rate applies, with at most %d operations in flight", s.threads, s.threads)
	}
	return nil
}

func rateValue(v string) (float64, bool) {
	m := ratePerSecRE.FindStringSubmatch(v)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseFloat(m[1], 64)
	return n, err == nil
}

var seqRE = regexp.MustCompile(`(?i)^([0-9]+[mbk]?)\.\.+([0-9]+[mbk]?)$`)

// parsePop reads -pop seq=A..B or dist=D (SettingsPopulation).
func (s *settings) parsePop(params []string) error {
	for _, p := range params {
		name, value, _ := strings.Cut(p, "=")
		switch lname := strings.ToLower(name); lname {
		case "seq":
			m := seqRE.FindStringSubmatch(value)
			if m == nil {
				return invalid("-pop seq=", value, "a range of population indexes such as 1..1000000 or 1..10M")
			}
			d, err := csdist.Parse("seq(" + m[1] + ".." + m[2] + ")")
			if err != nil {
				return invalid("-pop seq=", value, "min..max with min < max")
			}
			s.pop = population{given: true, seq: true, dist: d.WithText(value)}
		case "dist":
			d, err := csdist.Parse(value)
			if err != nil {
				return fmt.Errorf("stress_cmd: option -pop dist=: %w", err)
			}
			s.pop = population{given: true, seq: d.Kind() == csdist.KindSeq, dist: d}
		case "no-wrap":
			return unsupported("-pop no-wrap", "it ends the run once every index was visited; the scenario's phases decide when a step ends")
		case "read-lookback":
			return unsupported("-pop read-lookback=", "reads here draw from the population, not from recently written indexes")
		case "contents":
			return unsupported("-pop contents=", "the predefined tables hold one row per partition: there is no partition order to choose")
		default:
			return invalid("-pop", p, "seq=A..B or dist=DIST(...)")
		}
	}
	if !s.pop.given {
		return invalid("-pop", strings.Join(params, " "), "seq=A..B or dist=DIST(...)")
	}
	if lo, _ := s.pop.dist.Bounds(); lo < 0 {
		return invalid("-pop", strings.Join(params, " "), "non-negative population indexes")
	}
	return nil
}

// parseCol reads -col (SettingsColumn): size=, n= or names=, timestamp=.
func (s *settings) parseCol(params []string) error {
	var count *csdist.Dist
	for _, p := range params {
		name, value, _ := strings.Cut(p, "=")
		switch strings.ToLower(name) {
		case "size":
			d, err := csdist.Parse(value)
			if lo, hi := d.Bounds(); err != nil || d.Kind() == csdist.KindSeq || lo < 0 || hi > 16<<20 {
				return invalid("-col size=", value, "a distribution of cell sizes in bytes such as FIXED(512) or UNIFORM(100..1000), at most 16 MiB")
			}
			s.size = d
		case "n":
			d, err := csdist.Parse(value)
			if _, hi := d.Bounds(); err != nil || d.Kind() == csdist.KindSeq || hi < 1 || hi > 1000 {
				return invalid("-col n=", value, "a distribution of the number of columns such as FIXED(5), between 1 and 1000")
			}
			count = &d
		case "names":
			if err := s.parseNames(value); err != nil {
				return err
			}
		case "timestamp":
			if _, err := strconv.ParseInt(value, 10, 64); err != nil || value == "" || value[0] == '-' {
				return invalid("-col timestamp=", value, "a write timestamp in microseconds")
			}
			s.timestamp = value
		case "comparator":
			if !strings.EqualFold(value, "AsciiType") && !strings.EqualFold(value, "UTF8Type") {
				return unsupported("-col comparator="+value, "column names are ASCII text (AsciiType or UTF8Type)")
			}
		case "slice":
			return unsupported("-col slice", "Thrift-era range slices; reads here name their columns")
		case "super":
			return unsupported("-col super=", "super columns are Thrift-only")
		default:
			return invalid("-col", p, "size=DIST, n=DIST or names=a,b,c, timestamp=N")
		}
	}
	if count != nil && s.colNames != nil {
		return invalid("-col", strings.Join(params, " "), "n= or names=, not both (SettingsColumn's NameOptions and CountOptions)")
	}
	if count != nil {
		lo, hi := count.Bounds()
		s.colNames = countNames(int(hi))
		if lo < hi {
			s.note("-col n=%s: cassandra-stress's predefined write and read address all %d columns whatever the count drawn (CqlInserter and CqlReader build their statements over maxColumnsPerKey); so do these", count.Text(), hi)
		}
	}
	return nil
}

// countNames are SettingsColumn's names for n=: C0 ... C(n-1), sorted as
// bytes (so C10 comes before C2).
func countNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "C" + strconv.Itoa(i)
	}
	sortStrings(names)
	return names
}

var colNameRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,48}$`)

// parseNames reads names=a,b,c (sorted as bytes, as SettingsColumn sorts them).
func (s *settings) parseNames(value string) error {
	names := strings.Split(value, ",")
	seen := map[string]bool{}
	for _, n := range names {
		if !colNameRE.MatchString(n) || strings.EqualFold(n, "key") || seen[n] {
			return invalid("-col names=", value, "distinct column names of letters, digits and _ (not key)")
		}
		seen[n] = true
	}
	sortStrings(names)
	s.colNames = names
	return nil
}
