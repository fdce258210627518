package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/elasticity-dev/elasticity/provision"
)

// maxNodes bounds the work of decoding one document, so that alias bombs
// ("billion laughs") end in an error instead of eating the machine.
const maxNodes = 200000

// decoder walks a yaml.Node tree into Go values by hand rather than with
// yaml.Unmarshal, so that every problem carries a line and a field path and
// decoding goes on after the first problem.
type decoder struct {
	file     string
	sets     []string
	problems []Problem
	// pos maps a field path to the line of its value (negative: -(i+1) = from sets[i]).
	pos     map[string]int
	visited int
	aborted bool
	// undecodable holds the paths whose values could not be decoded: validation
	// says nothing more about them (their value is a zero, not the user's).
	undecodable map[string]bool
	// sections are the backends' own sections: top-level keys of these
	// names decode into the backend's type.
	sections map[string]provision.Options
}

func newDecoder(file string, sets []string) *decoder {
	return &decoder{file: file, sets: sets, pos: map[string]int{}}
}

// where turns a node line (negative for --set values) into File and Line.
func (d *decoder) where(line int) (string, int) {
	if line < 0 && -line-1 < len(d.sets) {
		return "--set " + d.sets[-line-1], 0
	}
	return d.file, line
}

func (d *decoder) addAt(line int, path, format string, args ...any) {
	f, l := d.where(line)
	d.problems = append(d.problems, Problem{File: f, Line: l, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// lineOf finds the recorded position of path or its nearest recorded parent.
func (d *decoder) lineOf(path string) int {
	for p := path; ; {
		if l, ok := d.pos[p]; ok {
			return l
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return d.pos[""]
		}
		p = p[:i]
	}
}

// problem records a problem at the position of path.
func (d *decoder) problem(path, format string, args ...any) {
	if d.undecodable[path] {
		return
	}
	d.addAt(d.lineOf(path), path, format, args...)
}

// isSet reports whether path was given in the file or by --set.
func (d *decoder) isSet(path string) bool {
	_, ok := d.pos[path]
	return ok
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unexpected YAML node"
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

var (
	typDuration  = reflect.TypeFor[Duration]()
	typSize      = reflect.TypeFor[Size]()
	typRate      = reflect.TypeFor[Rate]()
	typPercent   = reflect.TypeFor[Percent]()
	typRackList  = reflect.TypeFor[RackList]()
	typValueSize = reflect.TypeFor[ValueSize]()
	typMix       = reflect.TypeFor[Mix]()
	typHold      = reflect.TypeFor[Hold]()
	typStep      = reflect.TypeFor[Step]()
	typDurLimits = reflect.TypeFor[DurationLimits]()
	typBaseDurs  = reflect.TypeFor[BaselineDurations]()
	typStringMap = reflect.TypeFor[map[string]string]()
	typCountAll  = reflect.TypeFor[CountOrAll]()
)

// decode fills v from n; path is the field path of v.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if d.aborted {
		return
	}
	d.visited++
	if d.visited > maxNodes {
		d.aborted = true
		d.addAt(n.Line, path, "document too large (more than %d YAML nodes after expanding aliases)", maxNodes)
		return
	}
	line := n.Line
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			d.addAt(n.Line, path, "unresolved alias")
			return
		}
		// Problems of the field point at the alias; those inside the value at the anchor.
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return
		}
		n = n.Content[0]
		line = n.Line
	}
	d.pos[path] = line
	if isNull(n) {
		// An empty value leaves the field unset, so its default applies.
		delete(d.pos, path)
		return
	}
	if !d.decodeTyped(n, v, path) {
		d.decodeKind(n, v, path)
	}
}

// decodeTyped decodes the scenario's own value types (units, rack lists,
// the short forms of value_size, mix and hold, steps, ordered mappings);
// false leaves v to decodeKind.
func (d *decoder) decodeTyped(n *yaml.Node, v reflect.Value, path string) bool {
	switch v.Type() {
	case typDuration:
		if s, ok := d.scalar(n, path, "a duration such as 30m"); ok {
			x, err := ParseDuration(s)
			d.check(n, path, err)
			v.Set(reflect.ValueOf(x))
		}
		return true
	case typSize:
		if s, ok := d.scalar(n, path, "a size such as 1KiB"); ok {
			x, err := ParseSize(s)
			d.check(n, path, err)
			v.Set(reflect.ValueOf(x))
		}
		return true
	case typRate:
		if s, ok := d.scalar(n, path, "a rate such as 3400/s"); ok {
			x, err := ParseRate(s)
			d.check(n, path, err)
			v.Set(reflect.ValueOf(x))
		}
		return true
	case typPercent:
		if s, ok := d.scalar(n, path, "a percentage such as 90%"); ok {
			x, err := ParsePercent(s)
			d.check(n, path, err)
			v.Set(reflect.ValueOf(x))
		}
		return true
	case typCountAll:
		if s, ok := d.scalar(n, path, `a count or "all"`); ok {
			if strings.EqualFold(s, "all") {
				v.Set(reflect.ValueOf(All))
				return true
			}
			c, err := strconv.ParseInt(s, 10, 64)
			if err != nil || c < 0 {
				d.addAt(n.Line, path, `expected a count >= 0 or "all", got %s`, kindName(n))
				return true
			}
			v.Set(reflect.ValueOf(CountOrAll(c)))
		}
		return true
	case typRackList:
		if n.Kind == yaml.ScalarNode {
			c, err := strconv.Atoi(n.Value)
			if err != nil || c < 1 || c > 100 {
				d.addAt(n.Line, path, "expected a list of rack names or a rack count 1..100, got %s", kindName(n))
				return true
			}
			v.Set(reflect.ValueOf(RackNames(c)))
			return true
		}
		var names []string
		d.decode(n, reflect.ValueOf(&names).Elem(), path)
		v.Set(reflect.ValueOf(RackList(names)))
		return true
	case typValueSize:
		if n.Kind == yaml.ScalarNode {
			x, err := ParseSize(n.Value)
			d.check(n, path, err)
			v.Set(reflect.ValueOf(ValueSize{Min: x, Max: x}))
			return true
		}
	case typMix:
		if n.Kind == yaml.ScalarNode {
			w, r, ok := strings.Cut(n.Value, ":")
			wf, err1 := strconv.ParseFloat(strings.TrimSpace(w), 64)
			rf, err2 := strconv.ParseFloat(strings.TrimSpace(r), 64)
			if !ok || err1 != nil || err2 != nil || math.IsNaN(wf) || math.IsNaN(rf) || math.IsInf(wf, 0) || math.IsInf(rf, 0) {
				d.addAt(n.Line, path, "expected a write:read ratio such as 1:1 or {write: 1, read: 1}, got %s", kindName(n))
				return true
			}
			v.Set(reflect.ValueOf(Mix{Write: wf, Read: rf}))
			// Record sub-paths so validation names them.
			d.pos[path+".write"], d.pos[path+".read"] = n.Line, n.Line
			return true
		}
	case typHold:
		if n.Kind == yaml.ScalarNode {
			x, err := ParseDuration(n.Value)
			d.check(n, path, err)
			v.Set(reflect.ValueOf(Hold{Duration: x}))
			d.pos[path+".duration"] = n.Line
			return true
		}
	case typStep:
		d.decodeStep(n, v.Addr().Interface().(*Step), path)
		return true
	case typDurLimits:
		d.decodeDurationLimits(n, v.Addr().Interface().(*DurationLimits), path)
		return true
	case typBaseDurs:
		d.decodeBaselineDurations(n, v.Addr().Interface().(*BaselineDurations), path)
		return true
	}
	return false
}

// decodeKind decodes v by its kind: structs, pointers, scalars, lists and
// string maps.
func (d *decoder) decodeKind(n *yaml.Node, v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), path)
	case reflect.String:
		if s, ok := d.scalar(n, path, "a string"); ok {
			v.SetString(s)
		}
	case reflect.Int:
		if s, ok := d.scalar(n, path, "an integer"); ok {
			i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 32)
			if err != nil {
				d.addAt(n.Line, path, "expected an integer, got %q", s)
				return
			}
			v.SetInt(i)
		}
	case reflect.Float64:
		if s, ok := d.scalar(n, path, "a number"); ok {
			f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				d.addAt(n.Line, path, "expected a number, got %q", s)
				return
			}
			v.SetFloat(f)
		}
	case reflect.Bool:
		if s, ok := d.scalar(n, path, "true or false"); ok {
			b, err := strconv.ParseBool(s)
			if err != nil {
				d.addAt(n.Line, path, "expected true or false, got %q", s)
				return
			}
			v.SetBool(b)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.addAt(n.Line, path, "expected a list, got %s", kindName(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			d.decode(item, s.Index(i), join(path, strconv.Itoa(i)))
		}
		v.Set(s)
	case reflect.Map:
		d.decodeStringMap(n, v, path)
	default:
		panic("scenarios: unsupported field type " + v.Type().String())
	}
}

// decodeStringMap decodes a mapping of names to strings (env:, tags:).
func (d *decoder) decodeStringMap(n *yaml.Node, v reflect.Value, path string) {
	if v.Type() != typStringMap {
		panic("scenarios: unsupported map type " + v.Type().String())
	}
	if n.Kind != yaml.MappingNode {
		d.addAt(n.Line, path, "expected a mapping of names to strings, got %s", kindName(n))
		return
	}
	m := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key, ok := d.scalar(k, path, "a string key")
		if !ok {
			continue
		}
		p := join(path, key)
		if _, dup := m[key]; dup {
			d.addAt(k.Line, p, "duplicate key")
			continue
		}
		var s string
		d.decode(val, reflect.ValueOf(&s).Elem(), p)
		m[key] = s
	}
	v.Set(reflect.ValueOf(m))
}

// scalar returns the value of a scalar node, or records that want was expected.
func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		d.addAt(n.Line, path, "expected %s, got %s", want, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) check(n *yaml.Node, path string, err error) {
	if err != nil {
		d.addAt(n.Line, path, "%v", err)
	}
}

// fieldsOf maps yaml keys to struct field indexes.
func fieldsOf(t reflect.Type) (map[string]int, []string) {
	m := map[string]int{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		m[tag] = i
		names = append(names, tag)
	}
	return m, names
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.addAt(n.Line, path, "expected a mapping, got %s", kindName(n))
		return
	}
	fields, names := fieldsOf(v.Type())
	if path == "" {
		for name := range d.sections {
			names = append(names, name)
		}
	}
	seen := map[string]bool{}
	pairs := d.mergePairs(n, path, 0)
	for i := 0; i+1 < len(pairs); i += 2 {
		k, val := pairs[i], pairs[i+1]
		key, ok := d.scalar(k, path, "a field name")
		if !ok {
			continue
		}
		p := join(path, key)
		idx, known := fields[key]
		if !known && path == "" && strings.HasPrefix(key, "x-") {
			continue // extension field: a place for YAML anchors (docker-compose style)
		}
		var field reflect.Value
		if sec, ok := d.sections[key]; !known && path == "" && ok {
			// A backend's own section, of its own type.
			field, known = reflect.ValueOf(sec).Elem(), true
		} else if known {
			field = v.Field(idx)
		}
		if !known {
			d.addAt(k.Line, p, "unknown field%s", Suggest(key, names))
			continue
		}
		if seen[key] {
			d.addAt(k.Line, p, "duplicate field")
			continue
		}
		seen[key] = true
		d.decode(val, field, p)
		if _, ok := d.pos[p]; ok && k.Line > 0 && (val.Kind == yaml.MappingNode || val.Kind == yaml.SequenceNode) {
			// A problem of the section as a whole (a missing field) points at its key, not its first entry.
			d.pos[p] = k.Line
		}
	}
}

// Suggest names the closest known key, or lists them all.
func Suggest(key string, names []string) string {
	best, bestD := "", 1<<30
	for _, n := range names {
		if dd := editDistance(key, n); dd < bestD {
			best, bestD = n, dd
		}
	}
	for _, n := range names {
		if len(key) >= 3 && (strings.HasPrefix(n, key) || strings.HasPrefix(key, n)) {
			best, bestD = n, 0
			break
		}
	}
	if best != "" && bestD <= max(2, len(key)/3) {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	return " (known: " + strings.Join(sorted, ", ") + ")"
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

var stepKinds = []string{KindGrow, KindShrink, KindDecommission, KindDrain, KindHold, KindHook}

func (d *decoder) decodeStep(n *yaml.Node, st *Step, path string) {
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		if n.Kind == yaml.MappingNode && len(n.Content) > 2 {
			var keys []string
			for i := 0; i < len(n.Content); i += 2 {
				keys = append(keys, n.Content[i].Value)
			}
			d.addAt(n.Line, path, "a step has exactly one key (%s); found %s", strings.Join(stepKinds, " | "), strings.Join(keys, ", "))
			return
		}
		d.addAt(n.Line, path, "expected a step: a mapping with one key (%s), got %s", strings.Join(stepKinds, " | "), kindName(n))
		return
	}
	k, body := n.Content[0], n.Content[1]
	kind, ok := d.scalar(k, path, "a step kind")
	if !ok {
		return
	}
	p := join(path, kind)
	var target reflect.Value
	switch kind {
	case KindGrow:
		st.Grow = &Grow{}
		target = reflect.ValueOf(st.Grow).Elem()
	case KindShrink, KindDecommission:
		st.Shrink = &Shrink{}
		target = reflect.ValueOf(st.Shrink).Elem()
	case KindDrain:
		st.Drain = &Drain{}
		target = reflect.ValueOf(st.Drain).Elem()
	case KindHold:
		st.Hold = &Hold{}
		target = reflect.ValueOf(st.Hold).Elem()
	case KindHook:
		st.Hook = &Hook{}
		target = reflect.ValueOf(st.Hook).Elem()
	default:
		d.addAt(k.Line, p, "unknown step kind%s", Suggest(kind, stepKinds))
		return
	}
	st.kind = kind
	d.pos[p] = k.Line
	if body.Kind == yaml.AliasNode && body.Alias != nil {
		body = body.Alias
	}
	// Every kind accepts a name; take it out before decoding the body.
	if body.Kind == yaml.MappingNode {
		rest := *body
		rest.Content = nil
		pairs := d.mergePairs(body, p, 0)
		for i := 0; i+1 < len(pairs); i += 2 {
			if pairs[i].Kind == yaml.ScalarNode && pairs[i].Value == "name" {
				d.decode(pairs[i+1], reflect.ValueOf(&st.Name).Elem(), join(p, "name"))
				continue
			}
			rest.Content = append(rest.Content, pairs[i], pairs[i+1])
		}
		body = &rest
	}
	d.decode(body, target, p)
	d.pos[p] = k.Line
}

func (d *decoder) decodeDurationLimits(n *yaml.Node, dl *DurationLimits, path string) {
	d.namedEntries(n, path, "mapping of duration names to ceilings (\"New node(s) ready\": 30m)", func(name, p string, k, val *yaml.Node) {
		if val.Kind == yaml.ScalarNode {
			if f, ok, err := parsePlanFactor(val.Value); ok {
				d.pos[p] = val.Line
				if err != nil {
					d.addAt(val.Line, p, "%v", err)
				}
				*dl = append(*dl, DurationLimit{Name: name, PlanFactor: f})
				return
			}
		}
		var x Duration
		d.decode(val, reflect.ValueOf(&x).Elem(), p)
		*dl = append(*dl, DurationLimit{Name: name, Max: x})
	})
}

// decodeBaselineDurations reads thresholds.baseline.durations: a mapping of
// duration names to rules ({best_pct: 50}).
func (d *decoder) decodeBaselineDurations(n *yaml.Node, bd *BaselineDurations, path string) {
	d.namedEntries(n, path, "mapping of duration names to rules (\"Data balanced\": {best_pct: 50})", func(name, p string, k, val *yaml.Node) {
		var r Rule
		d.decode(val, reflect.ValueOf(&r).Elem(), p)
		d.pos[p] = k.Line
		*bd = append(*bd, BaselineDuration{Name: name, Rule: r})
	})
}

// namedEntries walks a mapping of duration names to values in order,
// refusing anything else and duplicate names; each is called with its name
// and field path.
func (d *decoder) namedEntries(n *yaml.Node, path, want string, each func(name, p string, k, val *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.addAt(n.Line, path, "expected a %s, got %s", want, kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name, ok := d.scalar(k, path, "a duration name")
		if !ok {
			continue
		}
		p := join(path, name)
		if seen[name] {
			d.addAt(k.Line, p, "duplicate key")
			continue
		}
		seen[name] = true
		each(name, p, k, val)
	}
}

// mergePairs returns the key/value pairs of a mapping with YAML merge keys
// ("<<: *defaults") expanded: keys written in the mapping win over merged
// ones, which are then left out, so they are neither applied nor duplicates.
func (d *decoder) mergePairs(n *yaml.Node, path string, depth int) []*yaml.Node {
	own := map[string]bool{}
	hasMerge := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			hasMerge = true
		} else {
			own[k.Value] = true
		}
	}
	if !hasMerge {
		return n.Content
	}
	var out []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!merge" {
			out = append(out, k, val)
			continue
		}
		if depth > 8 {
			d.addAt(k.Line, path, "merge keys nested too deeply")
			continue
		}
		srcs := []*yaml.Node{val}
		if val.Kind == yaml.SequenceNode {
			srcs = val.Content
		}
		for _, src := range srcs {
			if src.Kind == yaml.AliasNode && src.Alias != nil {
				src = src.Alias
			}
			if src.Kind != yaml.MappingNode {
				d.addAt(k.Line, path, "a merge key (<<) takes a mapping or a list of mappings, got %s", kindName(src))
				continue
			}
			// Merges of merges multiply like aliases do; count them against the same budget.
			d.visited += len(src.Content) + 1
			if d.visited > maxNodes {
				if !d.aborted {
					d.aborted = true
					d.addAt(k.Line, path, "document too large (more than %d YAML nodes after expanding aliases)", maxNodes)
				}
				return out
			}
			merged := d.mergePairs(src, path, depth+1)
			for j := 0; j+1 < len(merged); j += 2 {
				mk := merged[j]
				if own[mk.Value] {
					continue
				}
				own[mk.Value] = true
				out = append(out, mk, merged[j+1])
			}
		}
	}
	return out
}
