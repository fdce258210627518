package cql

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/elasticity-dev/elasticity/emulator/engine"
	lua "github.com/yuin/gopher-lua"
)

// udfTimeLimit bounds one call, as db/config.cc
// user_defined_function_time_limit_ms does (10 ms there; the emulator
// shares its cores with other processes, so it allows more).
const udfTimeLimit = time.Second

// callUDF is cql3/functions/user_function.cc execute: with RETURNS NULL ON
// NULL INPUT a null argument makes the result null; otherwise the Lua body
// runs as lang/lua.cc run_script runs it.
func callUDF(f *engine.Function, argTypes []datatype.DataType, ret datatype.DataType, args [][]byte) ([]byte, error) {
	if !f.CalledOnNullInput {
		for _, a := range args {
			if a == nil {
				return nil, nil
			}
		}
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	// lang/lua.cc loadedlibs: base, string, coroutine and table.
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.StringLibName, lua.OpenString}, {lua.CoroutineLibName, lua.OpenCoroutine}, {lua.TabLibName, lua.OpenTable}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), udfTimeLimit)
	defer cancel()
	L.SetContext(ctx)
	fn, err := L.LoadString(luaChunk(f.ArgNames, f.Body))
	if err != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "could not compile: %s", err)
	}
	L.Push(fn)
	for i, a := range args {
		v, err := toLua(L, argTypes[i], a)
		if err != nil {
			return nil, err
		}
		L.Push(v)
	}
	if err := L.PCall(len(args), lua.MultRet, nil); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, engine.Errorf(engine.CodeInvalid, "lua execution timeout: %dms elapsed", udfTimeLimit.Milliseconds())
		}
		return nil, engine.Errorf(engine.CodeInvalid, "lua execution failed: %s", err)
	}
	// lang/lua.cc convert_return.
	if n := L.GetTop(); n != 1 {
		return nil, engine.Errorf(engine.CodeInvalid, "%d values returned, expected 1", n)
	}
	return fromLua(ret, L.Get(1))
}

// toLua is lang/lua.cc to_lua_visitor: integers (and dates, times and
// timestamps) as Lua integers, floats as numbers, strings and blobs as
// strings, uuids and inets as their text, lists as sequences, sets as
// {v = true}, maps as {k = v}.
func toLua(L *lua.LState, dt datatype.DataType, b []byte) (lua.LValue, error) {
	if b == nil {
		return lua.LNil, nil
	}
	switch dt.Code() {
	case primitive.DataTypeCodeInt, primitive.DataTypeCodeBigint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeTinyint,
		primitive.DataTypeCodeCounter, primitive.DataTypeCodeTimestamp, primitive.DataTypeCodeTime, primitive.DataTypeCodeDate:
		if dt.Code() == primitive.DataTypeCodeDate {
			return lua.LNumber(binary.BigEndian.Uint32(b)), nil
		}
		return lua.LNumber(signedInt(b)), nil
	case primitive.DataTypeCodeFloat:
		return lua.LNumber(math.Float32frombits(binary.BigEndian.Uint32(b))), nil
	case primitive.DataTypeCodeDouble:
		return lua.LNumber(math.Float64frombits(binary.BigEndian.Uint64(b))), nil
	case primitive.DataTypeCodeBoolean:
		return lua.LBool(len(b) > 0 && b[0] != 0), nil
	case primitive.DataTypeCodeVarchar, primitive.DataTypeCodeAscii, primitive.DataTypeCodeBlob:
		return lua.LString(b), nil
	case primitive.DataTypeCodeVarint:
		n := new(big.Int).SetBytes(b)
		if len(b) > 0 && b[0]&0x80 != 0 {
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		f, _ := new(big.Float).SetInt(n).Float64()
		return lua.LNumber(f), nil
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet, primitive.DataTypeCodeMap:
		return collectionToLua(L, dt, b)
	}
	return nil, engine.Errorf(engine.CodeInvalid, "type %s is not supported as a Lua UDF argument by the emulator", typeName(dt))
}

func signedInt(b []byte) int64 {
	var v int64
	for i, c := range b {
		if i == 0 {
			v = int64(int8(c))
			continue
		}
		v = v<<8 | int64(c)
	}
	return v
}

// collectionToLua builds the table of a serialized list, set or map.
func collectionToLua(L *lua.LState, dt datatype.DataType, b []byte) (lua.LValue, error) {
	kt, vt := keyValueTypes(dt)
	t := L.NewTable()
	r := &reader{b: b}
	n := int(r.int32("collection size"))
	for i := 0; i < n; i++ {
		if kt == nil {
			v, err := toLua(L, vt, r.bytes("element"))
			if err != nil {
				return nil, err
			}
			t.RawSetInt(i+1, v)
			continue
		}
		k, err := toLua(L, kt, r.bytes("key"))
		if err != nil {
			return nil, err
		}
		var v lua.LValue = lua.LTrue
		if vt != nil {
			if v, err = toLua(L, vt, r.bytes("value")); err != nil {
				return nil, err
			}
		}
		t.RawSet(k, v)
	}
	if r.err != nil {
		return nil, engine.Errorf(engine.CodeServerError, "decoding a %s argument: %v", typeName(dt), r.err)
	}
	return t, nil
}

// fromLua is lang/lua.cc from_lua_visitor for the return type: integers
// from Lua integers (or numbers and numeric strings with an integral
// value), floats from numbers, text validated as utf8 and ascii, booleans
// by Lua truth, blobs from strings.
func fromLua(dt datatype.DataType, v lua.LValue) ([]byte, error) {
	if v == lua.LNil {
		return nil, nil
	}
	switch code := dt.Code(); code {
	case primitive.DataTypeCodeInt, primitive.DataTypeCodeBigint, primitive.DataTypeCodeSmallint, primitive.DataTypeCodeTinyint, primitive.DataTypeCodeCounter:
		n, err := luaInteger(v)
		if err != nil {
			return nil, err
		}
		return putInt(fixedSize(dt), n), nil
	case primitive.DataTypeCodeFloat, primitive.DataTypeCodeDouble:
		f, err := luaNumber(v)
		if err != nil {
			return nil, err
		}
		if code == primitive.DataTypeCodeFloat {
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
	case primitive.DataTypeCodeBoolean:
		if lua.LVAsBool(v) {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case primitive.DataTypeCodeVarchar, primitive.DataTypeCodeAscii, primitive.DataTypeCodeBlob:
		s, err := luaString(v)
		if err != nil {
			return nil, err
		}
		if code == primitive.DataTypeCodeAscii {
			for i := 0; i < len(s); i++ {
				if s[i] >= 0x80 {
					return nil, engine.Errorf(engine.CodeInvalid, "value is not valid ascii")
				}
			}
		}
		if code == primitive.DataTypeCodeVarchar && !utf8.ValidString(s) {
			return nil, engine.Errorf(engine.CodeInvalid, "value is not valid utf8, invalid character at byte offset %d", invalidUTF8Offset(s))
		}
		return []byte(s), nil
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet, primitive.DataTypeCodeMap:
		return collectionFromLua(dt, v)
	}
	return nil, engine.Errorf(engine.CodeInvalid, "type %s is not supported as a Lua UDF result by the emulator", typeName(dt))
}

// collectionFromLua is from_lua_visitor for lists (a sequence 1..n), sets
// (a table whose values are true) and maps, serialized with sets' and
// maps' keys in the type's order.
func collectionFromLua(dt datatype.DataType, v lua.LValue) ([]byte, error) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, engine.Errorf(engine.CodeInvalid, "value is not a table")
	}
	kt, vt := keyValueTypes(dt)
	type entry struct{ k, v []byte }
	var entries []entry
	var err error
	t.ForEach(func(lk, lv lua.LValue) {
		if err != nil {
			return
		}
		var e entry
		switch {
		case kt == nil: // list: the key is the position
			var n int64
			if n, err = luaInteger(lk); err == nil {
				e.k = binary.BigEndian.AppendUint64(nil, uint64(n))
				e.v, err = fromLua(vt, lv)
			}
		case vt == nil: // set
			if lv != lua.LTrue {
				err = engine.Errorf(engine.CodeInvalid, "sets are represented with tables with true values")
				return
			}
			e.k, err = fromLua(kt, lk)
		default:
			if e.k, err = fromLua(kt, lk); err == nil {
				e.v, err = fromLua(vt, lv)
			}
		}
		entries = append(entries, e)
	})
	if err != nil {
		return nil, err
	}
	sortBy := kt
	if sortBy == nil {
		sortBy = datatype.Bigint
	}
	sort.Slice(entries, func(i, j int) bool { c, _ := compareEncoded(sortBy, entries[i].k, entries[j].k); return c < 0 })
	out := binary.BigEndian.AppendUint32(nil, uint32(len(entries)))
	for i, e := range entries {
		if kt == nil {
			if int64(binary.BigEndian.Uint64(e.k)) != int64(i+1) {
				return nil, engine.Errorf(engine.CodeInvalid, "key %d missing in sequence of size %d", i+1, len(entries))
			}
		} else {
			out = binary.BigEndian.AppendUint32(out, uint32(len(e.k)))
			out = append(out, e.k...)
		}
		if vt != nil {
			out = binary.BigEndian.AppendUint32(out, uint32(len(e.v)))
			out = append(out, e.v...)
		}
	}
	return out, nil
}

func invalidUTF8Offset(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(s)
}

// luaNumber is visit_lua_number: numbers and numeric strings.
func luaNumber(v lua.LValue) (float64, error) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), nil
	case lua.LString:
		if f, err := strconv.ParseFloat(strings.TrimSpace(string(x)), 64); err == nil {
			return f, nil
		}
	case *lua.LTable:
	default:
		return 0, engine.Errorf(engine.CodeInvalid, "unexpected value")
	}
	return 0, engine.Errorf(engine.CodeInvalid, "value is not a number")
}

// luaInteger is get_varint: a number with an integral value.
func luaInteger(v lua.LValue) (int64, error) {
	f, err := luaNumber(v)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || f < math.MinInt64 || f > math.MaxInt64 {
		return 0, engine.Errorf(engine.CodeInvalid, "value is not an integer")
	}
	return int64(f), nil
}

// luaString is get_string: strings as they are, numbers as Lua prints
// them (integers without a fraction).
func luaString(v lua.LValue) (string, error) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		f := float64(x)
		if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return strconv.FormatInt(int64(f), 10), nil
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	}
	return "", engine.Errorf(engine.CodeInvalid, "unexpected value")
}

// keyValueTypes are a collection's key and value types: a list has only
// values, a set only keys.
func keyValueTypes(dt datatype.DataType) (kt, vt datatype.DataType) {
	switch c := dt.(type) {
	case *datatype.List:
		vt = c.ElementType
	case *datatype.Set:
		kt = c.ElementType
	case *datatype.Map:
		kt, vt = c.KeyType, c.ValueType
	}
	return kt, vt
}
