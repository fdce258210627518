package cql

import (
	"sort"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// keyspaceFunctions are a keyspace's functions (aggregate false) or
// aggregates, by name and then signature.
func keyspaceFunctions(sch *engine.Schema, ks string, aggregate bool, name string) []*engine.Function {
	var out []*engine.Function
	for _, f := range sch.Functions[ks] {
		if f.Aggregate == aggregate && (name == "" || f.Name == name) {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Signature() < out[j].Signature()
	})
	return out
}

// functionDescs describes functions or aggregates, with their CREATE
// statements when withStmt.
func functionDescs(fns []*engine.Function, withStmt bool) []description {
	out := make([]description, len(fns))
	for i, f := range fns {
		typ, stmt := "function", ""
		if f.Aggregate {
			typ = "aggregate"
		}
		if withStmt {
			stmt = functionCreateStatement(f)
		}
		out[i] = ksDesc(f.Keyspace, typ, f.Name, stmt)
	}
	return out
}

// functionCreateStatement is user_function.cc describe and, for an
// aggregate, aggregate_fcts.cc user_aggregate::describe.
func functionCreateStatement(f *engine.Function) string {
	var b strings.Builder
	if f.Aggregate {
		b.WriteString("CREATE AGGREGATE " + maybeQuote(f.Keyspace) + "." + maybeQuote(f.Name) + "(" + strings.Join(f.ArgTypes, ", ") + ")\n")
		b.WriteString("SFUNC " + maybeQuote(f.StateFunc) + "\nSTYPE " + f.StateType)
		if f.ReduceFunc != "" {
			b.WriteString("\nREDUCEFUNC " + maybeQuote(f.ReduceFunc))
		}
		if f.FinalFunc != "" {
			b.WriteString("\nFINALFUNC " + maybeQuote(f.FinalFunc))
		}
		if f.InitCond != "" {
			b.WriteString("\nINITCOND " + f.InitCond)
		}
		b.WriteString(";")
		return b.String()
	}
	args := make([]string, len(f.ArgTypes))
	for i, t := range f.ArgTypes {
		args[i] = f.ArgNames[i] + " " + withoutFrozen(t)
	}
	null := "RETURNS NULL"
	if f.CalledOnNullInput {
		null = "CALLED"
	}
	b.WriteString("CREATE FUNCTION " + maybeQuote(f.Keyspace) + "." + maybeQuote(f.Name) + "(" + strings.Join(args, ", ") + ")\n")
	b.WriteString(null + " ON NULL INPUT\nRETURNS " + withoutFrozen(f.ReturnType) + "\nLANGUAGE " + f.Language + "\nAS $$" + f.Body + "$$;")
	return b.String()
}

// allFunctions are every keyspace's functions or aggregates in keyspace,
// name and signature order.
func allFunctions(s *Server, aggregate bool) []*engine.Function {
	sch := schemaOf(s)
	var out []*engine.Function
	for _, ks := range sortedKeyspaces(sch) {
		out = append(out, keyspaceFunctions(sch, ks, aggregate, "")...)
	}
	return out
}

// functionRows are system_schema.functions (db/schema_tables.cc
// make_create_function_mutations).
func functionRows(s *Server) []map[string][]byte {
	var rows []map[string][]byte
	for _, f := range allFunctions(s, false) {
		rows = append(rows, map[string][]byte{
			"keyspace_name": encText(f.Keyspace), "function_name": encText(f.Name),
			"argument_types": encTextList(f.ArgTypes), "argument_names": encTextList(f.ArgNames),
			"body": encText(f.Body), "called_on_null_input": encBool(f.CalledOnNullInput),
			"language": encText(f.Language), "return_type": encText(f.ReturnType),
		})
	}
	return rows
}

// aggregateRows are system_schema.aggregates (make_create_aggregate_mutations:
// final_func and initcond only when the aggregate has them).
func aggregateRows(s *Server) []map[string][]byte {
	var rows []map[string][]byte
	for _, f := range allFunctions(s, true) {
		r := map[string][]byte{
			"keyspace_name": encText(f.Keyspace), "aggregate_name": encText(f.Name),
			"argument_types": encTextList(f.ArgTypes), "return_type": encText(f.ReturnType),
			"state_func": encText(f.StateFunc), "state_type": encText(f.StateType),
		}
		if f.FinalFunc != "" {
			r["final_func"] = encText(f.FinalFunc)
		}
		if f.InitCond != "" {
			r["initcond"] = encText(f.InitCond)
		}
		rows = append(rows, r)
	}
	return rows
}

// scyllaAggregateRows are system_schema.scylla_aggregates: the reducible
// aggregates' REDUCEFUNC (make_create_aggregate_mutations).
func scyllaAggregateRows(s *Server) []map[string][]byte {
	var rows []map[string][]byte
	for _, f := range allFunctions(s, true) {
		if f.ReduceFunc == "" {
			continue
		}
		rows = append(rows, map[string][]byte{
			"keyspace_name": encText(f.Keyspace), "aggregate_name": encText(f.Name),
			"argument_types": encTextList(f.ArgTypes), "reduce_func": encText(f.ReduceFunc),
			"state_type": encText(f.StateType),
		})
	}
	return rows
}

// withoutFrozen is a type's name without its frozen<> wrappers
// (abstract_type::cql3_type_name_without_frozen).
func withoutFrozen(t string) string {
	var b strings.Builder
	var drop []bool // per open '<': whether its '>' closes a frozen<
	for i := 0; i < len(t); i++ {
		switch {
		case strings.HasPrefix(t[i:], "frozen<"):
			drop = append(drop, true)
			i += len("frozen<") - 1
		case t[i] == '<':
			drop = append(drop, false)
			b.WriteByte('<')
		case t[i] == '>' && len(drop) > 0:
			if !drop[len(drop)-1] {
				b.WriteByte('>')
			}
			drop = drop[:len(drop)-1]
		default:
			b.WriteByte(t[i])
		}
	}
	return b.String()
}
