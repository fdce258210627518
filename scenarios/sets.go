package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// applySet applies the i-th override "path=value" to the document tree
// before decoding, so that an overridden value is type-checked exactly like
// one written in the file. Nodes it creates carry line -(i+1), which the
// decoder reports as the --set rather than a file line.
func applySet(doc *yaml.Node, i int, expr string) *Problem {
	where := "--set " + expr
	path, raw, ok := strings.Cut(expr, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" {
		return &Problem{File: where, Msg: "expected path=value, e.g. workload.load_percent=70"}
	}
	line := -(i + 1)
	val, err := parseSetValue(raw, line)
	if err != nil {
		return &Problem{File: where, Path: path, Msg: err.Error()}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map", Line: line}}
	}
	cur := doc.Content[0]
	segs := strings.Split(path, ".")
	for si, seg := range segs {
		last := si == len(segs)-1
		here := strings.Join(segs[:si], ".")
		if seg == "" {
			return &Problem{File: where, Path: path, Msg: "empty path segment"}
		}
		if cur.Kind == yaml.AliasNode && cur.Alias != nil {
			cur = cur.Alias
		}
		switch cur.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for k := 0; k+1 < len(cur.Content); k += 2 {
				if cur.Content[k].Value == seg {
					if last {
						cur.Content[k+1] = val
						return nil
					}
					next = cur.Content[k+1]
					if isNull(next) {
						next = newContainer(segs[si+1], line)
						cur.Content[k+1] = next
					}
					break
				}
			}
			if next == nil {
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg, Line: line}
				if last {
					cur.Content = append(cur.Content, key, val)
					return nil
				}
				next = newContainer(segs[si+1], line)
				cur.Content = append(cur.Content, key, next)
			}
			cur = next
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx > len(cur.Content) {
				return &Problem{File: where, Path: path, Msg: fmt.Sprintf("%s is a list of %d items; index %q must be 0..%d (%d appends)", here, len(cur.Content), seg, len(cur.Content), len(cur.Content))}
			}
			if last {
				if idx == len(cur.Content) {
					cur.Content = append(cur.Content, val)
				} else {
					cur.Content[idx] = val
				}
				return nil
			}
			if idx == len(cur.Content) {
				cur.Content = append(cur.Content, newContainer(segs[si+1], line))
			}
			next := cur.Content[idx]
			if isNull(next) {
				next = newContainer(segs[si+1], line)
				cur.Content[idx] = next
			}
			cur = next
		default:
			return &Problem{File: where, Path: path, Msg: fmt.Sprintf("cannot set a field inside %s: it is %s", here, kindName(cur))}
		}
	}
	return nil
}

// parseSetValue reads the value of an override as YAML ("70", "30m",
// "[a, b]", "{write: 1, read: 1}") and marks its nodes as coming from the override.
func parseSetValue(raw string, line int) (*yaml.Node, error) {
	if strings.TrimSpace(raw) == "" {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "", Line: line}, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(raw), &doc); err != nil {
		return nil, fmt.Errorf("value is not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "", Line: line}, nil
	}
	v := doc.Content[0]
	var mark func(n *yaml.Node)
	mark = func(n *yaml.Node) {
		n.Line = line
		for _, c := range n.Content {
			mark(c)
		}
	}
	mark(v)
	return v, nil
}

// newContainer makes the node a path segment descends into: a list when the
// next segment is an index, else a mapping.
func newContainer(next string, line int) *yaml.Node {
	if _, err := strconv.Atoi(next); err == nil {
		return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: line}
	}
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
}
