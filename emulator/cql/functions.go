package cql

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"sync"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Native scalar functions of keyspace system that statements use in
// values and selections: cql3/functions/time_uuid_fcts.hh (now,
// currentTimestamp, currentDate, currentTime, currentTimeUUID, dateOf,
// toTimestamp, unixTimestampOf, toUnixTimestamp, toDate) and uuid_fcts.hh
// (uuid).

// funcType is a function's result type; nil for an unknown function.
func funcType(name string) datatype.DataType {
	switch name {
	case "now", "currenttimeuuid":
		return datatype.Timeuuid
	case "currenttimestamp", "dateof", "totimestamp":
		return datatype.Timestamp
	case "currentdate", "todate":
		return datatype.Date
	case "currenttime":
		return datatype.Time
	case "unixtimestampof", "tounixtimestamp":
		return datatype.Bigint
	case "uuid":
		return datatype.Uuid
	}
	return nil
}

// funcValue evaluates a function call for a receiver of type dt.
func (ec *execCtx) funcValue(t cqlparse.Term, col string, dt datatype.DataType) ([]byte, error) {
	if t.Text == "fromjson" {
		return ec.fromJSON(t, col, dt)
	}
	if b, ok, err := ec.bytesConversion(t, col, dt); ok {
		return b, err
	}
	ft := funcType(t.Text)
	if ft == nil {
		return nil, engine.Errorf(engine.CodeInvalid, "Unknown function %s called", t.Text)
	}
	if dt != nil && typeName(dt) != typeName(ft) {
		return nil, engine.Errorf(engine.CodeInvalid, "Type error: cannot assign result of function system.%s (type %s) to %s (type %s)", t.Text, typeName(ft), col, typeName(dt))
	}
	now := time.Now()
	switch t.Text {
	case "now", "currenttimeuuid":
		return timeUUID(now), nil
	case "currenttimestamp":
		return binary.BigEndian.AppendUint64(nil, uint64(now.UnixMilli())), nil
	case "currentdate":
		return dateValue(now), nil
	case "currenttime":
		y, m, d := now.Date()
		return binary.BigEndian.AppendUint64(nil, uint64(now.Sub(time.Date(y, m, d, 0, 0, 0, 0, now.Location())))), nil
	case "uuid":
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return b, nil
	}
	// Conversions of one timeuuid argument.
	if len(t.Values) != 1 {
		return nil, engine.Errorf(engine.CodeInvalid, "Invalid number of arguments in call to function system.%s: 1 required but %d provided", t.Text, len(t.Values))
	}
	arg, _, err := ec.value(t.Values[0], col, datatype.Timeuuid)
	if err != nil {
		return nil, err
	}
	if arg == nil {
		return nil, nil
	}
	ms := uuidMillis(arg)
	switch t.Text {
	case "todate":
		return dateValue(time.UnixMilli(ms)), nil
	}
	return binary.BigEndian.AppendUint64(nil, uint64(ms)), nil
}

// gregorianOffset is the number of 100 ns intervals between the UUID
// epoch (1582-10-15) and the Unix epoch.
const gregorianOffset = 0x01B21DD213814000

var timeUUIDState struct {
	sync.Mutex
	last uint64
	node [8]byte
	init bool
}

// timeUUID is a version 1 UUID for t, unique within the process
// (utils/UUID_gen.hh get_time_UUID).
func timeUUID(t time.Time) []byte {
	s := &timeUUIDState
	s.Lock()
	if !s.init {
		_, _ = rand.Read(s.node[:])
		s.node[2] |= 0x01 // multicast bit: not a real MAC
		s.init = true
	}
	ts := uint64(t.UnixNano()/100) + gregorianOffset
	if ts <= s.last {
		ts = s.last + 1
	}
	s.last = ts
	node := s.node
	s.Unlock()
	b := make([]byte, 16)
	binary.BigEndian.PutUint32(b[0:], uint32(ts))
	binary.BigEndian.PutUint16(b[4:], uint16(ts>>32))
	binary.BigEndian.PutUint16(b[6:], uint16(ts>>48)&0x0fff|0x1000)
	b[8] = node[0]&0x3f | 0x80
	b[9] = node[1]
	copy(b[10:], node[2:8])
	return b
}

// uuidMillis is a version 1 UUID's time in Unix milliseconds.
func uuidMillis(u []byte) int64 {
	if len(u) != 16 {
		return 0
	}
	ts := uint64(binary.BigEndian.Uint16(u[6:])&0x0fff)<<48 | uint64(binary.BigEndian.Uint16(u[4:]))<<32 | uint64(binary.BigEndian.Uint32(u[0:]))
	return int64(ts-gregorianOffset) / 10000
}

// dateValue is a date's encoding: days since the epoch, with the epoch at 2^31.
func dateValue(t time.Time) []byte {
	days := t.Unix() / 86400
	if t.Unix() < 0 && t.Unix()%86400 != 0 {
		days--
	}
	return binary.BigEndian.AppendUint32(nil, uint32(days+1<<31))
}

// convFuncType is the result type of a one-argument conversion function
// applied to a column of type arg (time_uuid_fcts.hh; cql3/functions/
// bytes_conversion_fcts.hh for blobAs<type> and <type>AsBlob).
func convFuncType(name string, arg datatype.DataType) (datatype.DataType, error) {
	bad := func() error {
		return engine.Errorf(engine.CodeInvalid, "Type error: %s cannot be passed as argument 0 of function system.%s of type %s", typeName(arg), name, convFuncArg(name))
	}
	switch name {
	case "totimestamp":
		if arg == datatype.Timeuuid || arg == datatype.Date {
			return datatype.Timestamp, nil
		}
		return nil, bad()
	case "dateof":
		if arg == datatype.Timeuuid {
			return datatype.Timestamp, nil
		}
		return nil, bad()
	case "todate":
		if arg == datatype.Timeuuid || arg == datatype.Timestamp {
			return datatype.Date, nil
		}
		return nil, bad()
	case "tounixtimestamp":
		if arg == datatype.Timeuuid || arg == datatype.Timestamp || arg == datatype.Date {
			return datatype.Bigint, nil
		}
		return nil, bad()
	case "unixtimestampof":
		if arg == datatype.Timeuuid {
			return datatype.Bigint, nil
		}
		return nil, bad()
	}
	if strings.HasPrefix(name, "blobas") {
		dt, err := parseType(strings.TrimPrefix(name, "blobas"))
		if err != nil || arg != datatype.Blob {
			return nil, engine.Errorf(engine.CodeInvalid, "Unknown function '%s'", name)
		}
		return dt, nil
	}
	if strings.HasSuffix(name, "asblob") {
		if dt, err := parseType(strings.TrimSuffix(name, "asblob")); err == nil && typeName(dt) == typeName(arg) {
			return datatype.Blob, nil
		}
	}
	return nil, engine.Errorf(engine.CodeInvalid, "Unknown function '%s'", name)
}

func convFuncArg(name string) string {
	switch name {
	case "dateof", "unixtimestampof":
		return "timeuuid"
	}
	return "timeuuid, timestamp or date"
}

// convFunc applies a conversion function to a column value (null stays null).
func convFunc(name string, arg datatype.DataType, v []byte) []byte {
	if v == nil {
		return nil
	}
	var ms int64
	switch arg {
	case datatype.Timeuuid:
		ms = uuidMillis(v)
	case datatype.Timestamp:
		if len(v) == 8 {
			ms = int64(binary.BigEndian.Uint64(v))
		}
	case datatype.Date:
		if len(v) == 4 {
			ms = (int64(binary.BigEndian.Uint32(v)) - 1<<31) * 86400000
		}
	default:
		return v // blobAs<type> and <type>AsBlob keep the bytes
	}
	switch name {
	case "todate":
		return dateValue(time.UnixMilli(ms).UTC())
	}
	return binary.BigEndian.AppendUint64(nil, uint64(ms))
}

// bytesConversion evaluates blobAs<type>(blob) and <type>AsBlob(value) in a
// value (cql3/functions/bytes_conversion_fcts.hh): the bytes are kept, and
// blobAs<type> validates them as its type. ok is false for other functions.
func (ec *execCtx) bytesConversion(t cqlparse.Term, col string, dt datatype.DataType) (b []byte, ok bool, err error) {
	var from, to datatype.DataType
	switch {
	case strings.HasPrefix(t.Text, "blobas"):
		to, err = parseType(strings.TrimPrefix(t.Text, "blobas"))
		from = datatype.Blob
	case strings.HasSuffix(t.Text, "asblob"):
		from, err = parseType(strings.TrimSuffix(t.Text, "asblob"))
		to = datatype.Blob
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, true, engine.Errorf(engine.CodeInvalid, "Unknown function %s called", t.Text)
	}
	if len(t.Values) != 1 {
		return nil, true, engine.Errorf(engine.CodeInvalid, "Invalid number of arguments in call to function system.%s: 1 required but %d provided", t.Text, len(t.Values))
	}
	if dt != nil && !valueCompatible(dt, to) {
		return nil, true, engine.Errorf(engine.CodeInvalid, "Type error: cannot assign result of function system.%s (type %s) to %s (type %s)", t.Text, typeName(to), col, typeName(dt))
	}
	arg, _, err := ec.value(t.Values[0], col, from)
	if err != nil || arg == nil {
		return arg, true, err
	}
	if from == datatype.Blob {
		if verr := validateBytes(to, arg); verr != nil {
			return nil, true, engine.Errorf(engine.CodeInvalid, "In call to function %s, value 0x%x is not a valid binary representation for type %s", t.Text, arg, typeName(to))
		}
	}
	return arg, true, nil
}

// valueCompatible is abstract_type::is_value_compatible_with for the
// function results the emulator evaluates: the same type, ascii into
// text, anything into blob (types/types.cc).
func valueCompatible(receiver, from datatype.DataType) bool {
	return typeName(receiver) == typeName(from) || receiver == datatype.Varchar && from == datatype.Ascii || receiver == datatype.Blob
}
