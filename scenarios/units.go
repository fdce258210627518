package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/units"
)

// Duration is a time.Duration written as "30m", "1h30m", "90s" (or 0).
type Duration = units.Duration

// ParseDuration reads "30m", "1h30m", "1d", "90s" or "0".
func ParseDuration(s string) (Duration, error) { return units.ParseDuration(s) }

// Size is a number of bytes written as "1KiB", "468GB", "512B" or a plain integer (bytes).
type Size = units.Size

// ParseSize reads "1KiB", "1.5GiB", "468GB", "512B", "1024".
func ParseSize(s string) (Size, error) { return units.ParseSize(s) }

// HumanBytes prints a byte count with a binary unit and two decimals ("1.50 GiB").
func HumanBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for math.Abs(b) >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.2f %s", b, units[i])
}

// Rate is operations per second, written "3400/s", "200000/m", "1000/h" or a plain number (per second).
type Rate float64

// MarshalYAML writes "N/s".
func (r Rate) MarshalYAML() (any, error) { return r.String(), nil }

func (r Rate) String() string { return strconv.FormatFloat(float64(r), 'f', -1, 64) + "/s" }

// ParseRate reads "3400/s", "3400", "60/m", "3600/h".
func ParseRate(s string) (Rate, error) {
	t := strings.TrimSpace(s)
	div := 1.0
	if i := strings.IndexByte(t, '/'); i >= 0 {
		switch strings.TrimSpace(t[i+1:]) {
		case "s", "sec", "second":
		case "m", "min", "minute":
			div = 60
		case "h", "hour":
			div = 3600
		default:
			return 0, fmt.Errorf("invalid rate %q (use e.g. 3400/s)", s)
		}
		t = strings.TrimSpace(t[:i])
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid rate %q (use e.g. 3400/s)", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("rate %q must not be negative", s)
	}
	return Rate(f / div), nil
}

// Percent is a percentage 0..100, written "90%" or 90.
type Percent float64

// MarshalYAML writes "90%".
func (p Percent) MarshalYAML() (any, error) { return p.String(), nil }

func (p Percent) String() string { return strconv.FormatFloat(float64(p), 'f', -1, 64) + "%" }

// Fraction is the percentage as 0..1.
func (p Percent) Fraction() float64 { return float64(p) / 100 }

// ParsePercent reads "90%", "90" or "12.5%".
func ParsePercent(s string) (Percent, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid percentage %q (use e.g. 90%% or 90)", s)
	}
	return Percent(f), nil
}

// RackList is the rack names; YAML accepts a list of names or a count.
type RackList []string

// RackNames builds rack1..rackN.
func RackNames(n int) RackList {
	r := make(RackList, n)
	for i := range r {
		r[i] = fmt.Sprintf("rack%d", i+1)
	}
	return r
}

// ValueSize is a fixed size (Min == Max) or a uniform range of value sizes.
type ValueSize struct {
	Min Size `yaml:"min"`
	Max Size `yaml:"max"`
}

// Fixed reports whether every value has the same size.
func (v ValueSize) Fixed() bool { return v.Min == v.Max }

// Mean is the average value size in bytes.
func (v ValueSize) Mean() float64 { return (float64(v.Min) + float64(v.Max)) / 2 }

// MarshalYAML writes a fixed size as a scalar.
func (v ValueSize) MarshalYAML() (any, error) {
	if v.Fixed() {
		return v.Min.String(), nil
	}
	return struct {
		Min Size `yaml:"min"`
		Max Size `yaml:"max"`
	}{v.Min, v.Max}, nil
}

func (v ValueSize) String() string {
	if v.Fixed() {
		return v.Min.String()
	}
	return v.Min.String() + ".." + v.Max.String()
}

// MarshalYAML writes "1:1".
func (m Mix) MarshalYAML() (any, error) {
	return strconv.FormatFloat(m.Write, 'f', -1, 64) + ":" + strconv.FormatFloat(m.Read, 'f', -1, 64), nil
}

func (m Mix) String() string {
	s, _ := m.MarshalYAML()
	return s.(string)
}

// rePlanFactor matches a duration ceiling relative to the plan's estimate:
// "1.5x plan" (also "1.5 x plan", "1.5×plan").
var rePlanFactor = regexp.MustCompile(`^\s*([^\s×x]*)\s*[x×]\s*plan\s*$`)

// parsePlanFactor reads "1.5x plan"; ok is false when s is not of that
// form (it is then a plain duration), err set when the factor is bad.
func parsePlanFactor(s string) (f float64, ok bool, err error) {
	m := rePlanFactor.FindStringSubmatch(s)
	if m == nil {
		return 0, false, nil
	}
	f, perr := strconv.ParseFloat(m[1], 64)
	if perr != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return 0, true, fmt.Errorf("invalid multiple of the plan %q: want a positive number, e.g. \"1.5x plan\"", s)
	}
	return f, true, nil
}

// formatPlanFactor writes "1.5x plan".
func formatPlanFactor(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64) + "x plan"
}
