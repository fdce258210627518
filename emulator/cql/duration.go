package cql

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// A CQL duration as types/duration.hh keeps it: months and days (int32)
// and nanoseconds (int64), each signed alike.
type cqlDuration struct {
	months, days int32
	nanos        int64
}

// durationUnit mirrors types/duration.cc duration_unit: its index orders
// units (larger is greater), its counter and its factor within it.
type durationUnit struct {
	index  int
	long   string
	field  int // 0 months, 1 days, 2 nanoseconds
	factor int64
}

var (
	unitNanosecond  = durationUnit{0, "nanoseconds", 2, 1}
	unitMicrosecond = durationUnit{1, "microseconds", 2, 1e3}
	unitMillisecond = durationUnit{2, "milliseconds", 2, 1e6}
	unitSecond      = durationUnit{3, "seconds", 2, 1e9}
	unitMinute      = durationUnit{4, "minutes", 2, 60e9}
	unitHour        = durationUnit{5, "hours", 2, 3600e9}
	unitDay         = durationUnit{6, "days", 1, 1}
	unitWeek        = durationUnit{7, "weeks", 1, 7}
	unitMonth       = durationUnit{8, "months", 0, 1}
	unitYear        = durationUnit{9, "years", 0, 12}
)

var durationUnitTable = map[string]durationUnit{
	"y": unitYear, "mo": unitMonth, "w": unitWeek, "d": unitDay, "h": unitHour, "m": unitMinute,
	"s": unitSecond, "ms": unitMillisecond, "us": unitMicrosecond, "µs": unitMicrosecond, "ns": unitNanosecond,
}

// durationBuilder is duration.cc's duration_builder: it refuses a unit
// given twice or out of decreasing order, and a count that would overflow
// its counter.
type durationBuilder struct {
	d       cqlDuration
	current *durationUnit
}

func (b *durationBuilder) addText(count string, u durationUnit) error {
	n, err := strconv.ParseInt(count, 10, 64)
	if err != nil {
		return fmt.Errorf("Invalid duration. The count for the %s is out of range", u.long)
	}
	return b.add(n, u)
}

func (b *durationBuilder) add(n int64, u durationUnit) error {
	if avail := b.available(u); n > avail {
		return fmt.Errorf("Invalid duration. The number of %s must be less than or equal to %d", u.long, avail)
	}
	if b.current != nil {
		switch {
		case u.index == b.current.index:
			return fmt.Errorf("Invalid duration. The %s are specified multiple times", u.long)
		case u.index > b.current.index:
			return fmt.Errorf("Invalid duration. The %s should be after %s", b.current.long, u.long)
		}
	}
	b.current = &u
	switch u.field {
	case 0:
		b.d.months += int32(n * u.factor)
	case 1:
		b.d.days += int32(n * u.factor)
	default:
		b.d.nanos += n * u.factor
	}
	return nil
}

func (b *durationBuilder) available(u durationUnit) int64 {
	switch u.field {
	case 0:
		return (math.MaxInt32 - int64(b.d.months)) / u.factor
	case 1:
		return (math.MaxInt32 - int64(b.d.days)) / u.factor
	}
	return (math.MaxInt64 - b.d.nanos) / u.factor
}

var (
	durationStandard    = regexp.MustCompile(`^(\d+)(y|Y|mo|MO|mO|Mo|w|W|d|D|h|H|s|S|ms|MS|mS|Ms|us|US|uS|Us|µs|µS|ns|NS|nS|Ns|m|M)`)
	durationISO         = regexp.MustCompile(`^P((\d+)Y)?((\d+)M)?((\d+)D)?(T((\d+)H)?((\d+)M)?((\d+)S)?)?$`)
	durationISOAlt      = regexp.MustCompile(`^P(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$`)
	durationISOWeeks    = regexp.MustCompile(`^P(\d+)W$`)
	durationISOUnits    = []durationUnit{unitYear, unitMonth, unitDay, unitHour, unitMinute, unitSecond}
	durationISOGroups   = []int{2, 4, 6, 9, 11, 13}
	errDurationNotMatch = fmt.Errorf("no duration format matches")
)

// parseDuration is types/duration.cc's cql_duration(string_view): an
// optional '-', then the unit form (1y2mo3w4d5h6m7s8ms9us10ns) or one of
// the ISO 8601 forms (P1Y2M3DT4H5M6S, P3W, P0001-02-03T04:05:06).
func parseDuration(s string) (cqlDuration, error) {
	neg := strings.HasPrefix(s, "-")
	d, err := parseUnsignedDuration(strings.TrimPrefix(s, "-"))
	if err == errDurationNotMatch {
		return d, fmt.Errorf("Unable to convert '%s' to a duration", s)
	}
	if err != nil {
		return d, err
	}
	if neg {
		d = cqlDuration{-d.months, -d.days, -d.nanos}
	}
	return d, nil
}

func parseUnsignedDuration(s string) (cqlDuration, error) {
	var b durationBuilder
	switch {
	case s == "":
		return b.d, errDurationNotMatch
	case s[0] != 'P':
		return b.d, b.standard(s)
	case strings.HasSuffix(s, "W"):
		m := durationISOWeeks.FindStringSubmatch(s)
		if m == nil {
			return b.d, errDurationNotMatch
		}
		return b.d, b.addText(m[1], unitWeek)
	case strings.Contains(s, "-"):
		m := durationISOAlt.FindStringSubmatch(s)
		if m == nil {
			return b.d, errDurationNotMatch
		}
		for i, u := range durationISOUnits {
			if err := b.addText(m[i+1], u); err != nil {
				return b.d, err
			}
		}
		return b.d, nil
	}
	m := durationISO.FindStringSubmatch(s)
	if m == nil {
		return b.d, errDurationNotMatch
	}
	for i, u := range durationISOUnits {
		if g := m[durationISOGroups[i]]; g != "" {
			if err := b.addText(g, u); err != nil {
				return b.d, err
			}
		}
	}
	return b.d, nil
}

// standard parses the unit form one component at a time, as
// parse_duration_standard_format does, so that a unit given twice or out
// of order is named in the error.
func (b *durationBuilder) standard(s string) error {
	for s != "" {
		m := durationStandard.FindStringSubmatch(s)
		if m == nil {
			return errDurationNotMatch
		}
		s = s[len(m[0]):]
		if err := b.addText(m[1], durationUnitTable[strings.ToLower(m[2])]); err != nil {
			return err
		}
	}
	return nil
}
