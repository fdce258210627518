package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds a scenario file.
const MaxFileSize = 4 << 20

// Load reads a scenario file strictly, applies --set overrides ("path=value",
// in order), fills in defaults and validates. On bad input the error is a
// *ValidationError listing every problem with file:line and field path.
func Load(path string, sets []string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &ValidationError{Problems: []Problem{{File: path, Msg: fmt.Sprintf("cannot read scenario: %v", unwrapPathError(err))}}}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &ValidationError{Problems: []Problem{{File: path, Msg: fmt.Sprintf("cannot read scenario: %v", err)}}}
	}
	if len(data) > MaxFileSize {
		return nil, &ValidationError{Problems: []Problem{{File: path, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}}}
	}
	return Parse(data, path, sets)
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// yamlLine pulls the line out of yaml.v3's syntax errors ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse is Load on bytes; name is used in messages (a file name or "-").
func Parse(data []byte, name string, sets []string) (*Scenario, error) {
	if name == "" {
		name = "<scenario>"
	}
	d := newDecoder(name, sets)
	doc, prob := parseDocument(data, name)
	if prob != nil {
		return nil, &ValidationError{Problems: []Problem{*prob}}
	}
	for i, expr := range sets {
		if p := applySet(doc, i, expr); p != nil {
			d.problems = append(d.problems, *p)
		}
	}
	s := &Scenario{source: name, Backends: newSections()}
	d.sections = s.Backends
	d.pos[""] = 1
	if len(doc.Content) > 0 && doc.Content[0].Kind != yaml.MappingNode && !isNull(doc.Content[0]) {
		d.addAt(doc.Content[0].Line, "", "a scenario is a mapping of fields (name, cluster, dataset, ...), got %s", kindName(doc.Content[0]))
	} else {
		d.decode(doc, reflect.ValueOf(s).Elem(), "")
	}
	if d.aborted {
		return nil, &ValidationError{Problems: d.problems}
	}
	d.undecodable = map[string]bool{}
	for _, p := range d.problems {
		d.undecodable[p.Path] = true
	}
	readProfile(s, d, name)
	readUserCommand(s, d, name)
	applyDefaults(s, d)
	validate(s, d)
	if len(d.problems) > 0 {
		sortProblems(d.problems)
		return nil, &ValidationError{Problems: d.problems}
	}
	s.lines, s.sets = d.pos, sets
	return s, nil
}

// parseDocument parses exactly one YAML document.
func parseDocument(data []byte, name string) (*yaml.Node, *Problem) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &yaml.Node{Kind: yaml.DocumentNode}, nil
		}
		return nil, syntaxProblem(err, name)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Problem{File: name, Line: extra.Line, Msg: "more than one YAML document; a scenario file holds one"}
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxProblem(err, name)
	}
	return &doc, nil
}

func syntaxProblem(err error, name string) *Problem {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Problem{File: name, Line: line, Msg: "invalid YAML: " + m[2]}
	}
	return &Problem{File: name, Msg: "invalid YAML: " + msg}
}

// YAML writes the resolved scenario (defaults filled in); Load reads it back to the same scenario.
func (s *Scenario) YAML() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encoding scenario %s: %w", s.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding scenario %s: %w", s.Name, err)
	}
	return buf.Bytes(), nil
}

// MarshalYAML writes a step as a one-key mapping with its name first.
func (st Step) MarshalYAML() (any, error) {
	var body any
	switch {
	case st.Grow != nil:
		body = st.Grow
	case st.Shrink != nil:
		body = st.Shrink
	case st.Drain != nil:
		body = st.Drain
	case st.Hold != nil:
		body = st.Hold
	case st.Hook != nil:
		body = st.Hook
	default:
		return nil, fmt.Errorf("step %q has no kind", st.Name)
	}
	var bn yaml.Node
	if err := bn.Encode(body); err != nil {
		return nil, err
	}
	if st.Name != "" {
		bn.Content = append([]*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name"},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: st.Name},
		}, bn.Content...)
	}
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: st.Kind()}, &bn,
	}}, nil
}

// MarshalYAML writes the limits as an ordered mapping.
func (dl DurationLimits) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, l := range dl {
		v := l.Max.String()
		if l.PlanFactor > 0 {
			v = formatPlanFactor(l.PlanFactor)
		}
		n.Content = append(n.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: l.Name},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v})
	}
	return n, nil
}

// MarshalYAML writes the rules as an ordered mapping.
func (bd BaselineDurations) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, d := range bd {
		var v yaml.Node
		if err := v.Encode(d.Rule); err != nil {
			return nil, err
		}
		v.Style = yaml.FlowStyle
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: d.Name}, &v)
	}
	return n, nil
}
