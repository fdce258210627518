package cql

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	timestampDateRe = regexp.MustCompile(`^(\d{4})-(\d+)-(\d+)([ tT](\d+):(\d+)(:(\d+)(\.(\d+))?)?)?`)
	timestampZoneRe = regexp.MustCompile(`^([\+-]\d{2}:?(\d{2})?)$`)
)

// timestampFromString is types/types.cc timestamp_from_string: "now", a
// number of milliseconds, or yyyy-mm-dd[( |t)hh:mm[:ss[.fff]]] followed by
// a zone (+hh[:]mm, z, utc, gmt; none means the node's local zone). Its
// errors read as ScyllaDB's: "unable to parse date '…': …".
func timestampFromString(s string) (int64, error) {
	str := strings.ToLower(s)
	if str == "now" {
		return time.Now().UnixMilli(), nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	fail := func(why string) (int64, error) {
		return 0, fmt.Errorf("unable to parse date '%s': %s", s, why)
	}
	m := timestampDateRe.FindStringSubmatchIndex(str)
	if m == nil {
		return fail(fmt.Sprintf("Unable to parse timestamp from '%s'", str))
	}
	t, err := timestampTime(str, m)
	if err != nil {
		return fail(err.Error())
	}
	tz := str[m[1]:]
	trimmed := strings.Trim(tz, " ")
	switch {
	case timestampZoneRe.MatchString(tz):
		off, err := utcOffset(tz)
		if err != nil {
			return fail(err.Error())
		}
		t = t.Add(-off)
	case trimmed == "":
		// No zone: the node's local time (c_local_adjustor).
		t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.Local)
	case trimmed != "z" && trimmed != "utc" && trimmed != "gmt":
		return fail(fmt.Sprintf("Unable to parse timezone '%s'", tz))
	}
	return t.UnixMilli(), nil
}

// timestampTime is types.cc get_time: the date must exist (boost's
// gregorian date refuses Feb 30) and milliseconds have at most 3 digits.
func timestampTime(str string, m []int) (time.Time, error) {
	group := func(i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return str[m[2*i]:m[2*i+1]]
	}
	num := func(i int) int {
		n, _ := strconv.Atoi(group(i))
		return n
	}
	year, month, day := num(1), num(2), num(3)
	if month < 1 || month > 12 || day < 1 || day > time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return time.Time{}, fmt.Errorf("Day of month is not valid for year")
	}
	ms := 0
	if frac := group(10); frac != "" {
		if len(frac) > 3 {
			return time.Time{}, fmt.Errorf("Milliseconds length exceeds expected (%d)", len(frac))
		}
		ms = num(10)
		for l := len(frac); l < 3; l++ {
			ms *= 10
		}
	}
	t := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	return t.Add(time.Duration(num(5))*time.Hour + time.Duration(num(6))*time.Minute +
		time.Duration(num(8))*time.Second + time.Duration(ms)*time.Millisecond), nil
}

// utcOffset is types.cc get_utc_offset: +hh:mm, +hhmm or +hh.
func utcOffset(tz string) (time.Duration, error) {
	digits := strings.ReplaceAll(tz[1:], ":", "")
	h, err := strconv.Atoi(digits[:2])
	if err != nil || len(digits) != 4 {
		return 0, fmt.Errorf("Cannot get UTC offset for a timestamp")
	}
	mins, _ := strconv.Atoi(digits[2:])
	off := time.Duration(h)*time.Hour + time.Duration(mins)*time.Minute
	if tz[0] == '-' {
		off = -off
	}
	return off, nil
}

var simpleDateRe = regexp.MustCompile(`^(-?\d+)-(\d+)-(\d+)$`)

// dateFromString is types/types.cc simple_date_type_impl::from_string_view,
// for string and integer literals alike (constants.cc parses both with the
// type's from_string): a whole number is the raw unsigned day count (the
// epoch at 2^31); a number followed by more is [-]y-m-d.
func dateFromString(s string) (uint32, error) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	digits := i > 0 && !(i == 1 && s[0] == '-')
	if !digits {
		return 0, fmt.Errorf("Unable to make unsigned int (for date) from %s", s)
	}
	if i < len(s) {
		m := simpleDateRe.FindStringSubmatch(s)
		if m == nil {
			return 0, fmt.Errorf("Unable to coerce '%s' to a formatted date (long)", s)
		}
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		days := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC).Unix() / 86400
		if days < math.MinInt32 {
			return 0, fmt.Errorf("Input date %s is less than min supported date -5877641-06-23", s)
		}
		if days > math.MaxInt32 {
			return 0, fmt.Errorf("Input date %s is greater than max supported date 5881580-07-11", s)
		}
		return uint32(days + 1<<31), nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("Unable to make unsigned int (for date) from %s", s)
	}
	if v < 0 || v > math.MaxUint32 {
		return 0, fmt.Errorf("Unable to make unsigned int (for date) from %d", v)
	}
	return uint32(v), nil
}

// timeFromString is types/types.cc time_type_impl::from_string_view:
// hh:mm:ss[.fffffffff], nanoseconds since midnight, each field bounded.
func timeFromString(s string) (int64, error) {
	const formatError = "Timestamp format must be hh:mm:ss[.fffffffff]"
	hms, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 {
		return 0, fmt.Errorf(formatError)
	}
	var v [3]int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return 0, fmt.Errorf(formatError)
		}
		v[i] = n
	}
	for i, what := range []string{"Hour", "Minute", "Second"} {
		if limit := []int64{24, 60, 60}[i]; v[i] < 0 || v[i] >= limit {
			return 0, fmt.Errorf("%s out of bounds (%d).", what, v[i])
		}
	}
	ns := (v[0]*3600 + v[1]*60 + v[2]) * int64(time.Second)
	if hasFrac {
		if len(frac) > 9 {
			return 0, fmt.Errorf("more than 9 nanosecond digits: %s", s)
		}
		f, err := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		if err != nil || f < 0 {
			return 0, fmt.Errorf("Nanosecond out of bounds (%s).", frac)
		}
		ns += f
	}
	return ns, nil
}
