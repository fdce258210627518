package cql

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// jsonSlots fills an INSERT JSON's column values (cql3/statements/
// update_statement.cc json_helpers::parse): keys name columns,
// case-insensitively unless wrapped in double quotes; a column the object
// omits becomes null, or keeps its value with DEFAULT UNSET; a key that
// names no column is refused.
func (ec *execCtx) jsonSlots(ti *tableInfo, st *cqlparse.Insert, slots []slot) error {
	text, err := ec.jsonText(*st.JSON)
	if err != nil {
		return err
	}
	values, err := jsonObject(text)
	if err != nil {
		return err
	}
	for _, c := range ti.all {
		v, ok := values[c.Name]
		delete(values, c.Name)
		switch {
		case !ok && st.DefaultUnset:
			continue
		case !ok || v == nil:
			slots[c.idx] = slot{nil, true}
			continue
		}
		t, err := jsonTerm(c.dt, v)
		if err != nil {
			return engine.Errorf(engine.CodeInvalid, "%v", err)
		}
		b, _, err := ec.value(t, c.Name, c.dt)
		if err != nil {
			return err
		}
		slots[c.idx] = slot{b, true}
	}
	for name := range values {
		return engine.Errorf(engine.CodeInvalid, "JSON values map contains unrecognized column: %s", name)
	}
	return nil
}

func (ec *execCtx) jsonText(t cqlparse.Term) (string, error) {
	if t.Kind == cqlparse.TermString {
		return t.Text, nil
	}
	if t.Bind >= len(ec.values) || ec.values[t.Bind] == nil || ec.values[t.Bind].Contents == nil {
		return "", engine.Errorf(engine.CodeInvalid, "Got null for INSERT JSON values")
	}
	return string(ec.values[t.Bind].Contents), nil
}

// jsonObject parses the JSON object with its keys as update_statement.cc
// handle_case_sensitivity names them.
func jsonObject(text string) (map[string]any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var raw map[string]any
	if err := d.Decode(&raw); err != nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Could not decode JSON string as a map: %v. (String was: %s)", err, text)
	}
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		if len(k) > 1 && k[0] == '"' && k[len(k)-1] == '"' {
			out[k[1:len(k)-1]] = v
		} else {
			out[strings.ToLower(k)] = v
		}
	}
	return out, nil
}

// jsonTerm turns a JSON value into the literal of type dt that
// types/json_utils.cc from_json_object reads it as, so the literal's own
// encoding and checks apply.
func jsonTerm(dt datatype.DataType, v any) (cqlparse.Term, error) {
	if v == nil {
		return cqlparse.Term{Kind: cqlparse.TermNull}, nil
	}
	switch x := dt.(type) {
	case *datatype.List, *datatype.Set, *datatype.Tuple:
		arr, ok := v.([]any)
		if !ok {
			return cqlparse.Term{}, marshalErrorf("%s must be represented as JSON Array", typeName(dt))
		}
		kind := cqlparse.TermList
		if _, tuple := dt.(*datatype.Tuple); tuple {
			kind = cqlparse.TermTuple
		}
		t := cqlparse.Term{Kind: kind}
		for i, e := range arr {
			et, err := jsonTerm(jsonElementType(dt, i), e)
			if err != nil {
				return t, err
			}
			t.Values = append(t.Values, et)
		}
		return t, nil
	case *datatype.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return cqlparse.Term{}, marshalErrorf("%s must be represented as JSON Object", typeName(dt))
		}
		t := cqlparse.Term{Kind: cqlparse.TermMap}
		for k, e := range obj {
			kt, err := jsonTerm(x.KeyType, jsonKey(x.KeyType, k))
			if err != nil {
				return t, err
			}
			vt, err := jsonTerm(x.ValueType, e)
			if err != nil {
				return t, err
			}
			t.Keys, t.Values = append(t.Keys, kt), append(t.Values, vt)
		}
		return t, nil
	}
	return jsonScalar(dt, v)
}

func jsonElementType(dt datatype.DataType, i int) datatype.DataType {
	switch x := dt.(type) {
	case *datatype.List:
		return x.ElementType
	case *datatype.Set:
		return x.ElementType
	case *datatype.Tuple:
		if i < len(x.FieldTypes) {
			return x.FieldTypes[i]
		}
	}
	return datatype.Blob
}

// jsonKey: a map's keys are JSON strings, read as a JSON string by a
// native key type and re-parsed as JSON by a collection, tuple or user
// type (types/json_utils.cc from_json_object_aux(map_type_impl),
// is_native()). Re-parsing every key read "2011-02-03" as the number 2011
// and "0x01" as 0: a date or timestamp key came out wrong, a blob key
// failed (test/cqlpy test_fromjson_map_key_date, _timestamp, _blob, _time).
func jsonKey(kt datatype.DataType, k string) any {
	if collectionTypes(kt) == nil && tupleTypes(kt) == nil {
		return k
	}
	d := json.NewDecoder(strings.NewReader(k))
	d.UseNumber()
	var v any
	if d.Decode(&v) == nil {
		return v
	}
	return k
}

// jsonScalar is from_json_object_visitor for the scalar types.
func jsonScalar(dt datatype.DataType, v any) (cqlparse.Term, error) {
	str, isStr := v.(string)
	switch v := v.(type) {
	case json.Number:
		if dt == datatype.Varchar || dt == datatype.Ascii || dt == datatype.Blob || dt == datatype.Boolean {
			break
		}
		kind := cqlparse.TermInt
		if strings.ContainsAny(v.String(), ".eE") {
			kind = cqlparse.TermFloat
			// An integer type takes a number in scientific notation or
			// with a zero fraction (1e6, 12.0), not 12.34
			// (types/json_utils.cc to_int).
			if r, ok := new(big.Rat).SetString(v.String()); ok && r.IsInt() && isIntegerType(dt) {
				return cqlparse.Term{Kind: cqlparse.TermInt, Text: r.Num().String()}, nil
			}
		}
		return cqlparse.Term{Kind: kind, Text: v.String()}, nil
	case bool:
		if dt == datatype.Boolean {
			return cqlparse.Term{Kind: cqlparse.TermBool, Text: fmt.Sprint(v)}, nil
		}
	}
	if !isStr {
		return cqlparse.Term{}, marshalErrorf("Invalid JSON object %v for type %s", v, typeName(dt))
	}
	switch dt {
	case datatype.Varchar, datatype.Ascii, datatype.Timestamp, datatype.Date, datatype.Time, datatype.Inet:
		return cqlparse.Term{Kind: cqlparse.TermString, Text: str}, nil
	case datatype.Blob:
		if len(str) < 2 || str[:2] != "0x" {
			return cqlparse.Term{}, marshalErrorf("Blob JSON strings must start with 0x")
		}
		return cqlparse.Term{Kind: cqlparse.TermBlob, Text: strings.ToLower(str[2:])}, nil
	case datatype.Boolean:
		switch strings.ToLower(strings.TrimSpace(str)) {
		case "true", "false":
			return cqlparse.Term{Kind: cqlparse.TermBool, Text: strings.ToLower(strings.TrimSpace(str))}, nil
		}
		return cqlparse.Term{}, marshalErrorf("Invalid JSON object \"%s\"", str)
	case datatype.Uuid, datatype.Timeuuid:
		return cqlparse.Term{Kind: cqlparse.TermUUID, Text: strings.ToLower(str)}, nil
	case datatype.Duration:
		return cqlparse.Term{Kind: cqlparse.TermDuration, Text: str}, nil
	}
	// Numbers given as strings are read with the type's from_string.
	kind := cqlparse.TermInt
	if bytes.ContainsAny([]byte(str), ".eEnNiI") {
		kind = cqlparse.TermFloat
	}
	if str == "" {
		return cqlparse.Term{}, marshalErrorf("Unable to make %s from ''", typeName(dt))
	}
	return cqlparse.Term{Kind: kind, Text: str}, nil
}

// fromJSON evaluates fromJson(text) for a receiver of type dt
// (cql3/functions/functions.cc make_from_json_function: the text parsed as
// JSON, null for JSON null or a null argument, else from_json_object of the
// receiver's type); a text that does not parse or does not fit the type
// fails the function (FunctionFailure).
func (ec *execCtx) fromJSON(t cqlparse.Term, col string, dt datatype.DataType) ([]byte, error) {
	if len(t.Values) != 1 {
		return nil, engine.Errorf(engine.CodeInvalid, "fromJson() accepts 1 argument only")
	}
	if dt == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "fromJson() can only be called if receiver type is known")
	}
	arg, _, err := ec.value(t.Values[0], col, datatype.Varchar)
	if err != nil || arg == nil {
		return nil, err
	}
	fail := func(format string, args ...any) error {
		return &engine.Error{Code: engine.CodeFunctionFailure, Message: fmt.Sprintf(format, args...),
			Keyspace: ec.keyspace, Function: "fromjson", ArgTypes: []string{typeName(dt)}}
	}
	d := json.NewDecoder(bytes.NewReader(arg))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		if err == nil {
			err = fmt.Errorf("trailing data")
		}
		return nil, fail("Failed parsing fromJson parameter: %v", err)
	}
	if v == nil {
		return nil, nil
	}
	term, err := jsonTerm(dt, v)
	if err != nil {
		return nil, fail("%v", err)
	}
	b, _, err := ec.value(term, col, dt)
	if err != nil {
		if ee, ok := err.(*engine.Error); ok {
			return nil, fail("%s", ee.Message)
		}
		return nil, fail("%v", err)
	}
	return b, nil
}

// isIntegerType: the integer_type_impl types (tinyint, smallint, int,
// bigint).
func isIntegerType(dt datatype.DataType) bool {
	return dt == datatype.Tinyint || dt == datatype.Smallint || dt == datatype.Int || dt == datatype.Bigint
}
