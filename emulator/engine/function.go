package engine

import (
	"fmt"
	"strings"
)

// Function is a user-defined function or aggregate, as
// system_schema.functions and system_schema.aggregates describe them
// (db/schema_tables.cc make_function_mutation, make_aggregate_mutation).
type Function struct {
	Keyspace, Name string
	// ArgTypes are the CQL names of the argument types (for an aggregate,
	// the state function's arguments after the state).
	ArgTypes   []string
	ArgNames   []string `json:",omitempty"`
	ReturnType string
	// CalledOnNullInput is CALLED ON NULL INPUT (else RETURNS NULL ON
	// NULL INPUT: a null argument makes the result null unrun).
	CalledOnNullInput bool   `json:",omitempty"`
	Language          string `json:",omitempty"`
	Body              string `json:",omitempty"`

	// Aggregate marks a user-defined aggregate (create_aggregate_statement.cc).
	Aggregate  bool   `json:",omitempty"`
	StateFunc  string `json:",omitempty"`
	StateType  string `json:",omitempty"`
	FinalFunc  string `json:",omitempty"`
	ReduceFunc string `json:",omitempty"`
	// InitCond is the INITCOND literal as CQL text ("" when none);
	// InitState is its value serialized as StateType.
	InitCond  string `json:",omitempty"`
	InitState []byte `json:",omitempty"`
}

// Signature is the function's key in its keyspace: name(type,type).
func (f *Function) Signature() string { return Signature(f.Name, f.ArgTypes) }

// Signature names a function overload: name(type,type).
func Signature(name string, argTypes []string) string {
	return name + "(" + strings.Join(argTypes, ",") + ")"
}

// ApplyFunctionChange applies CreateFunction/DropFunction to fns (keyspace
// -> signature -> function), returning a new map; noop reports an IF [NOT]
// EXISTS that changed nothing. The statement layer validates first; this is
// the schema's own check (cql3/statements/function_statement.cc).
func ApplyFunctionChange(fns map[string]map[string]*Function, ch SchemaChange) (next map[string]map[string]*Function, noop bool, err error) {
	if ch.Function == nil {
		return nil, false, Errorf(CodeInvalid, "function schema change without a function")
	}
	f := ch.Function
	sig := f.Signature()
	old := fns[f.Keyspace][sig]
	switch ch.Kind {
	case CreateFunction:
		if old != nil && !ch.OrReplace {
			if ch.IfNotExists {
				return fns, true, nil
			}
			return nil, false, Errorf(CodeInvalid, "The function '%s.%s' already exists", f.Keyspace, sig)
		}
	case DropFunction:
		if old == nil {
			if ch.IfExists {
				return fns, true, nil
			}
			return nil, false, Errorf(CodeInvalid, "User function %s.%s doesn't exist", f.Keyspace, sig)
		}
	default:
		return nil, false, fmt.Errorf("not a function change: %d", ch.Kind)
	}
	next = make(map[string]map[string]*Function, len(fns)+1)
	for ks, m := range fns {
		c := make(map[string]*Function, len(m))
		for k, v := range m {
			c[k] = v
		}
		next[ks] = c
	}
	if next[f.Keyspace] == nil {
		next[f.Keyspace] = map[string]*Function{}
	}
	if ch.Kind == DropFunction {
		delete(next[f.Keyspace], sig)
		return next, false, nil
	}
	cp := *f
	next[f.Keyspace][sig] = &cp
	return next, false, nil
}
