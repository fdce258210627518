// Package units holds the value types of a scenario that its sections
// share, the backends' own sections among them: durations and byte sizes,
// with their parsing and short printing. It imports nothing of the framework.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written as "30m", "1h30m", "90s" (or 0).
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return formatDuration(time.Duration(d)) }

// MarshalYAML writes the short form ("30m").
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// ParseDuration reads "30m", "1h30m", "1d", "90s" or "0".
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	// Go durations have no day unit; accept a leading "Nd".
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q (use e.g. 30s, 30m, 1h30m)", s)
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[i+1:]
		if s == "" {
			return Duration(days), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (use e.g. 30s, 30m, 1h30m)", s)
	}
	if d < 0 || days < 0 {
		return 0, fmt.Errorf("duration %q must not be negative", s)
	}
	return Duration(days + d), nil
}

// formatDuration prints whole units without the "0s" tails of time.Duration.String.
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	if d%time.Second != 0 {
		return d.String()
	}
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	h := d / time.Hour
	m := (d % time.Hour) / time.Minute
	sec := (d % time.Minute) / time.Second
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if sec > 0 {
		fmt.Fprintf(&b, "%ds", sec)
	}
	return b.String()
}

// Size is a number of bytes written as "1KiB", "468GB", "512B" or a plain integer (bytes).
type Size int64

// MarshalYAML writes the shortest exact form.
func (s Size) MarshalYAML() (any, error) { return s.String(), nil }

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseSize reads "1KiB", "1.5GiB", "468GB", "512B", "1024".
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	mult := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			mult = u.mult
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid size %q (use e.g. 512B, 1KiB, 468GB)", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("size %q must not be negative", s)
	}
	v := f * mult
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Size(math.Round(v)), nil
}

func (s Size) String() string {
	b := int64(s)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && b%u.mult == 0 {
			return fmt.Sprintf("%d%s", b/u.mult, u.suffix)
		}
	}
	return fmt.Sprintf("%dB", b)
}
