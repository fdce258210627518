package cql

import (
	"regexp"
	"sort"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/yuin/gopher-lua/parse"
)

// errUDFDisabled is cql3/statements/function_statement.cc create_arg_types
// on a node without enable_user_defined_functions and experimental udf.
var errUDFDisabled = engine.Errorf(engine.CodeInvalid, "User defined functions are disabled. Set enable_user_defined_functions and experimental_features:udf to enable them")

// functionChange validates CREATE/DROP FUNCTION/AGGREGATE as
// cql3/statements/function_statement.cc, create_function_statement.cc,
// create_aggregate_statement.cc and drop_function_statement.cc do.
func (ec *execCtx) functionChange(sch *engine.Schema, x *cqlparse.FunctionStmt) (*engine.SchemaChange, error) {
	if !ec.s.opts.UserDefinedFunctions {
		return nil, errUDFDisabled
	}
	ks, err := keyspaceOf(x.Keyspace, ec.keyspace)
	if err != nil {
		return nil, err
	}
	if sch.Keyspaces[ks] == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Keyspace '%s' doesn't exist", ks)
	}
	args, err := functionTypes(sch, ks, x.ArgTypes)
	if err != nil {
		return nil, err
	}
	if x.Verb == "DROP" {
		return dropFunction(sch, ks, x, args)
	}
	f := &engine.Function{Keyspace: ks, Name: x.Function, ArgTypes: args, ArgNames: x.ArgNames}
	if old := sch.Functions[ks][f.Signature()]; old != nil && old.Aggregate != x.Aggregate && x.OrReplace {
		what := "function"
		if x.Aggregate {
			what = "aggregate"
		}
		return nil, engine.Errorf(engine.CodeInvalid, "Cannot replace '%s.%s' which is not a user defined %s", ks, f.Signature(), what)
	} else if old != nil && !x.OrReplace && !x.IfNotExists {
		return nil, engine.Errorf(engine.CodeInvalid, "The function '%s.%s' already exists", ks, f.Signature())
	}
	if x.Aggregate {
		err = aggregateDef(sch, f, x)
	} else {
		err = functionDef(sch, f, x)
	}
	if err != nil {
		return nil, err
	}
	return &engine.SchemaChange{Kind: engine.CreateFunction, Function: f, KeyspaceName: ks, IfNotExists: x.IfNotExists, OrReplace: x.OrReplace}, nil
}

// functionTypes prepares argument types as function_statement.cc
// prepare_type: a user type must be named without frozen; names come out
// canonical (varchar is text).
func functionTypes(sch *engine.Schema, ks string, raw []string) ([]string, error) {
	out := make([]string, len(raw))
	for i, r := range raw {
		t, err := functionType(sch, ks, r)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// qualifiedType finds the keyspace-qualified user type names of a raw type.
var qualifiedType = regexp.MustCompile(`("[^"]+"|[A-Za-z0-9_]+)\.`)

func functionType(sch *engine.Schema, ks, raw string) (string, error) {
	for _, m := range qualifiedType.FindAllStringSubmatch(raw, -1) {
		// cql3/cql3_type.cc raw_ut prepare_internal: user types only in
		// their own keyspace.
		if other := strings.Trim(m[1], `"`); other != ks {
			return "", engine.Errorf(engine.CodeInvalid, "Statement on keyspace %s cannot refer to a user type in keyspace %s; user types can only be used in the keyspace they are defined in", ks, other)
		}
		raw = strings.Replace(raw, m[0], "", 1)
	}
	if strings.HasPrefix(raw, "frozen<") && lookupUserType(keyspaceTypes(sch, ks), strings.TrimSuffix(strings.TrimPrefix(raw, "frozen<"), ">")) != nil {
		return "", engine.Errorf(engine.CodeInvalid, "User defined argument and return types should not be frozen")
	}
	dt, err := parseTypeIn(raw, keyspaceTypes(sch, ks))
	if err != nil {
		return "", err
	}
	return typeName(dt), nil
}

// dropFunction is drop_function_statement_base::validate_while_executing:
// with a signature it drops that overload, without one the only function
// of that name.
func dropFunction(sch *engine.Schema, ks string, x *cqlparse.FunctionStmt, args []string) (*engine.SchemaChange, error) {
	var f *engine.Function
	if x.ArgsPresent {
		f = sch.Functions[ks][engine.Signature(x.Function, args)]
		if f == nil && !x.IfExists {
			return nil, engine.Errorf(engine.CodeInvalid, "User function %s.%s(%s) doesn't exist", ks, x.Function, strings.Join(args, ", "))
		}
	} else {
		for _, c := range sch.Functions[ks] {
			if c.Name != x.Function {
				continue
			}
			if f != nil {
				return nil, engine.Errorf(engine.CodeInvalid, "There are multiple functions named %s.%s", ks, x.Function)
			}
			f = c
		}
		if f == nil && !x.IfExists {
			return nil, engine.Errorf(engine.CodeInvalid, "No function named %s.%s found", ks, x.Function)
		}
	}
	if f == nil {
		return nil, nil
	}
	if f.Aggregate != x.Aggregate {
		// drop_function_statement.cc / drop_aggregate_statement.cc.
		if x.Aggregate {
			return nil, engine.Errorf(engine.CodeInvalid, "'%s.%s' is not a user defined aggregate", ks, f.Signature())
		}
		return nil, engine.Errorf(engine.CodeInvalid, "'%s.%s' is not a user defined function", ks, f.Signature())
	}
	if !f.Aggregate {
		for _, a := range sch.Functions[ks] {
			if a.Aggregate && (a.StateFunc == f.Name || a.FinalFunc == f.Name || a.ReduceFunc == f.Name) {
				// db/schema_tables.cc / migration_manager: a function an
				// aggregate uses cannot be dropped.
				return nil, engine.Errorf(engine.CodeInvalid, "Cannot delete function %s.%s, as it is used by user-defined aggregate %s.%s", ks, f.Name, ks, a.Name)
			}
		}
	}
	return &engine.SchemaChange{Kind: engine.DropFunction, Function: f, KeyspaceName: ks, IfExists: x.IfExists}, nil
}

// functionDef is create_function_statement.cc create: Lua only (lang/
// manager.cc), compiled as lang/lua.cc compile does (the arguments bound
// by "local a,b = ...").
func functionDef(sch *engine.Schema, f *engine.Function, x *cqlparse.FunctionStmt) error {
	if x.Language != "lua" {
		// wasm needs ScyllaDB's wasmtime runtime, which the emulator has not.
		return engine.Errorf(engine.CodeInvalid, "Language '%s' is not supported", x.Language)
	}
	rt, err := functionType(sch, f.Keyspace, x.ReturnType)
	if err != nil {
		return err
	}
	if _, err := parse.Parse(strings.NewReader(luaChunk(x.ArgNames, x.Body)), f.Name); err != nil {
		return engine.Errorf(engine.CodeInvalid, "could not compile: %s", err)
	}
	f.ReturnType, f.CalledOnNullInput, f.Language, f.Body = rt, x.CalledOnNullInput, x.Language, x.Body
	return nil
}

// luaChunk is the script lang/lua.cc compile runs: the body after a line
// binding the argument names to the chunk's varargs.
func luaChunk(argNames []string, body string) string {
	if len(argNames) == 0 {
		return body
	}
	return "local " + strings.Join(argNames, ",") + " = ...;\n" + body
}

// aggregateDef is create_aggregate_statement.cc create: the state function
// takes (stype, args...) and returns stype; the final function takes
// stype; the reduce function takes (stype, stype).
func aggregateDef(sch *engine.Schema, f *engine.Function, x *cqlparse.FunctionStmt) error {
	st, err := functionType(sch, f.Keyspace, x.SType)
	if err != nil {
		return err
	}
	fns := sch.Functions[f.Keyspace]
	acc := append([]string{st}, f.ArgTypes...)
	sf := fns[engine.Signature(x.SFunc, acc)]
	if sf == nil || sf.Aggregate {
		return engine.Errorf(engine.CodeInvalid, "State function %s.%s(%s) not found", f.Keyspace, x.SFunc, strings.Join(acc, ", "))
	}
	if sf.ReturnType != st {
		return engine.Errorf(engine.CodeInvalid, "State function '%s.%s' doesn't return state (%s)", f.Keyspace, sf.Signature(), st)
	}
	f.ReturnType = st
	if x.ReduceFunc != "" {
		if rf := fns[engine.Signature(x.ReduceFunc, []string{st, st})]; rf == nil || rf.Aggregate {
			return engine.Errorf(engine.CodeInvalid, "Scalar reduce function %s for state type %s not found.", x.ReduceFunc, st)
		}
	}
	if x.FinalFunc != "" {
		ff := fns[engine.Signature(x.FinalFunc, []string{st})]
		if ff == nil || ff.Aggregate {
			return engine.Errorf(engine.CodeInvalid, "Final function %s.%s(%s) not found", f.Keyspace, x.FinalFunc, st)
		}
		f.ReturnType = ff.ReturnType
	}
	if x.InitCond != nil {
		sdt, err := parseTypeIn(st, keyspaceTypes(sch, f.Keyspace))
		if err != nil {
			return err
		}
		if f.InitState, err = encodeLiteral(sdt, *x.InitCond); err != nil {
			return err
		}
		f.InitCond = termText(*x.InitCond)
	}
	f.Aggregate, f.StateFunc, f.StateType, f.FinalFunc, f.ReduceFunc = true, x.SFunc, st, x.FinalFunc, x.ReduceFunc
	return nil
}

// udfCall is a selector calling a user-defined function on columns.
type udfCall struct {
	f        *engine.Function
	args     []*colInfo
	argTypes []datatype.DataType
	ret      datatype.DataType
}

// udfSelector resolves a selector's call of a user-defined function
// (cql3/functions/functions.cc find: a name without keyspace is looked up
// in the table's keyspace), matching the argument columns' types to an
// overload. ok is false for a name no user-defined function has.
func (p *projection) udfSelector(ti *tableInfo, sel cqlparse.Selector) (*colInfo, bool, error) {
	ks := sel.FuncKeyspace
	if ks == "" {
		ks = ti.keyspace
	}
	var named []*engine.Function
	for _, f := range p.fns[ks] {
		if f.Name == sel.Func {
			named = append(named, f)
		}
	}
	if len(named) == 0 {
		if sel.FuncKeyspace != "" {
			return nil, false, engine.Errorf(engine.CodeInvalid, "Unknown function %s.%s", ks, sel.Func)
		}
		return nil, false, nil
	}
	call := &udfCall{}
	var argTypes []string
	for _, a := range sel.Args {
		c, err := ti.column(a)
		if err != nil {
			return nil, false, err
		}
		call.args = append(call.args, c)
		call.argTypes = append(call.argTypes, c.dt)
		argTypes = append(argTypes, typeName(c.dt))
	}
	call.f = p.fns[ks][engine.Signature(sel.Func, argTypes)]
	if call.f == nil {
		return nil, false, engine.Errorf(engine.CodeInvalid, "Invalid call to function %s.%s, none of its type signatures match (known type signatures: %s)", ks, sel.Func, signatures(named))
	}
	dt, err := parseType(call.f.ReturnType)
	if err != nil {
		return nil, false, engine.Errorf(engine.CodeServerError, "return type of %s.%s: %v", ks, call.f.Signature(), err)
	}
	call.ret = dt
	// cql3/selection: a function selector is named ks.f(arg, arg).
	name := ks + "." + sel.Func + "(" + strings.Join(sel.Args, ", ") + ")"
	out := &colInfo{Column: engine.Column{Name: name, Type: typeName(dt)}, dt: dt, idx: len(ti.all) + len(p.attrs)}
	p.attrs = append(p.attrs, cellAttr{fn: sel.Func, udf: call})
	if call.f.Aggregate {
		p.aggregates = true
	}
	return out, true, nil
}

func signatures(fns []*engine.Function) string {
	var s []string
	for _, f := range fns {
		s = append(s, f.Keyspace+"."+engine.Signature(f.Name, f.ArgTypes))
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// callUDF runs a call on a decoded row; the first error is kept in p.err.
func (p *projection) callUDF(c *udfCall, row [][]byte) []byte {
	if c.f.Aggregate {
		return nil // folded over the rows by foldUDA
	}
	args := make([][]byte, len(c.args))
	for i, a := range c.args {
		args[i] = row[a.idx]
	}
	v, err := callUDF(c.f, c.argTypes, c.ret, args)
	if err != nil && p.err == nil {
		p.err = err
	}
	return v
}

// functions are the user-defined functions of the current schema.
func (s *Server) functions() map[string]map[string]*engine.Function {
	if sch := s.b.Schema(); sch != nil {
		return sch.Functions
	}
	return nil
}

// foldUDA is a user-defined aggregate over rows (aggregate_fcts.cc
// user_aggregate): the state starts at INITCOND (or null), the state
// function takes (state, args...) per row, the final function maps the
// last state to the result.
func (p *projection) foldUDA(c *udfCall, rows [][][]byte) ([]byte, error) {
	a := c.f
	fns := p.fns[a.Keyspace]
	st, err := parseType(a.StateType)
	if err != nil {
		return nil, engine.Errorf(engine.CodeServerError, "state type of %s.%s: %v", a.Keyspace, a.Signature(), err)
	}
	sf := fns[engine.Signature(a.StateFunc, append([]string{a.StateType}, a.ArgTypes...))]
	if sf == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "State function %s.%s of %s not found", a.Keyspace, a.StateFunc, a.Signature())
	}
	state := a.InitState
	sfTypes := append([]datatype.DataType{st}, c.argTypes...)
	for _, r := range rows {
		args := [][]byte{state}
		for _, col := range c.args {
			args = append(args, r[col.idx])
		}
		if state, err = callUDF(sf, sfTypes, st, args); err != nil {
			return nil, err
		}
	}
	if a.FinalFunc == "" {
		return state, nil
	}
	ff := fns[engine.Signature(a.FinalFunc, []string{a.StateType})]
	if ff == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Final function %s.%s of %s not found", a.Keyspace, a.FinalFunc, a.Signature())
	}
	return callUDF(ff, []datatype.DataType{st}, c.ret, [][]byte{state})
}
