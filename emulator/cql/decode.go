package cql

import (
	"encoding/binary"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// Request bodies are decoded here rather than by the library codec: every
// length is checked against the bytes actually present (a 20-byte frame
// cannot make the server allocate gigabytes), and values alias the frame
// body instead of being copied.

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("truncated or invalid %s", what)
	}
	r.b = nil
}

// Fixed-size reads go through take, so a truncated body fails in one place.
func (r *reader) byte1(what string) byte {
	if b := r.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) short(what string) uint16 {
	if b := r.take(2, what); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *reader) int32(what string) int32 {
	if b := r.take(4, what); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64(what string) int64 {
	if b := r.take(8, what); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) take(n int, what string) []byte {
	if n < 0 || n > len(r.b) {
		r.fail(what)
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) str(what string) string        { return string(r.take(int(r.short(what)), what)) }
func (r *reader) longStr(what string) string    { return string(r.take(int(r.int32(what)), what)) }
func (r *reader) shortBytes(what string) []byte { return r.take(int(r.short(what)), what) }

func (r *reader) bytes(what string) []byte {
	n := r.int32(what)
	if n < 0 {
		return nil
	}
	return r.take(int(n), what)
}

func (r *reader) value(v *primitive.Value, what string) {
	n := r.int32(what)
	switch {
	case n == -1:
		v.Type = primitive.ValueTypeNull
	case n == -2:
		v.Type = primitive.ValueTypeUnset
	case n < 0:
		r.fail(what)
	default:
		v.Type, v.Contents = primitive.ValueTypeRegular, r.take(int(n), what)
	}
}

// values reads [short n] followed by n [value]s, with names when named.
func (r *reader) values(named bool) ([]*primitive.Value, map[string]*primitive.Value) {
	n := int(r.short("value count"))
	if n > len(r.b)/4 { // each value needs at least its 4-byte length
		r.fail("value count")
		return nil, nil
	}
	slab := make([]primitive.Value, n) // one allocation for all values
	if named {
		m := make(map[string]*primitive.Value, n)
		for i := 0; i < n && r.err == nil; i++ {
			name := r.str("value name")
			r.value(&slab[i], "value")
			m[name] = &slab[i]
		}
		return nil, m
	}
	vs := make([]*primitive.Value, n)
	for i := range vs {
		r.value(&slab[i], "value")
		vs[i] = &slab[i]
	}
	return vs, nil
}

func (r *reader) done(what string) error {
	if r.err != nil {
		return fmt.Errorf("%s: %w", what, r.err)
	}
	return nil
}

const (
	qfValues       = 0x01
	qfSkipMetadata = 0x02
	qfPageSize     = 0x04
	qfPagingState  = 0x08
	qfSerial       = 0x10
	qfTimestamp    = 0x20
	qfNames        = 0x40
)

func (r *reader) queryOptions() *message.QueryOptions {
	o := &message.QueryOptions{Consistency: primitive.ConsistencyLevel(r.short("consistency"))}
	flags := r.byte1("query flags")
	if flags&qfValues != 0 {
		o.PositionalValues, o.NamedValues = r.values(flags&qfNames != 0)
	}
	o.SkipMetadata = flags&qfSkipMetadata != 0
	if flags&qfPageSize != 0 {
		o.PageSize = r.int32("page size")
	}
	if flags&qfPagingState != 0 {
		o.PagingState = r.bytes("paging state")
	}
	if flags&qfSerial != 0 {
		sc := primitive.ConsistencyLevel(r.short("serial consistency"))
		o.SerialConsistency = &sc
	}
	if flags&qfTimestamp != 0 {
		ts := r.int64("default timestamp")
		o.DefaultTimestamp = &ts
	}
	return o
}

// decodeRequest decodes a request body for opcode.
func decodeRequest(op primitive.OpCode, flags primitive.HeaderFlag, body []byte) (message.Message, error) {
	r := &reader{b: body}
	if flags.Contains(primitive.HeaderFlagCustomPayload) {
		n := int(r.short("custom payload"))
		for i := 0; i < n && r.err == nil; i++ {
			r.str("custom payload key")
			r.bytes("custom payload value")
		}
	}
	var msg message.Message
	switch op {
	case primitive.OpCodeOptions:
		msg = &message.Options{}
	case primitive.OpCodeStartup:
		n := int(r.short("startup options"))
		m := map[string]string{}
		for i := 0; i < n && r.err == nil; i++ {
			k := r.str("startup option")
			m[k] = r.str("startup option value")
		}
		msg = &message.Startup{Options: m}
	case primitive.OpCodeRegister:
		n := int(r.short("event types"))
		var ts []primitive.EventType
		for i := 0; i < n && r.err == nil; i++ {
			ts = append(ts, primitive.EventType(r.str("event type")))
		}
		msg = &message.Register{EventTypes: ts}
	case primitive.OpCodeQuery:
		q := r.longStr("query string")
		msg = &message.Query{Query: q, Options: r.queryOptions()}
	case primitive.OpCodePrepare:
		msg = &message.Prepare{Query: r.longStr("query string")}
	case primitive.OpCodeExecute:
		id := r.shortBytes("prepared id")
		msg = &message.Execute{QueryId: id, Options: r.queryOptions()}
	case primitive.OpCodeBatch:
		b := &message.Batch{Type: primitive.BatchType(r.byte1("batch type"))}
		n := int(r.short("batch size"))
		if n > len(r.b)/3 { // kind + at least a 2-byte id/string length
			r.fail("batch size")
		}
		for i := 0; i < n && r.err == nil; i++ {
			child := &message.BatchChild{}
			switch r.byte1("batch child kind") {
			case 0:
				child.Query = r.longStr("batch query")
			case 1:
				child.Id = r.shortBytes("batch prepared id")
			default:
				r.fail("batch child kind")
			}
			child.Values, _ = r.values(false)
			b.Children = append(b.Children, child)
		}
		b.Consistency = primitive.ConsistencyLevel(r.short("batch consistency"))
		flags := r.byte1("batch flags")
		if flags&qfSerial != 0 {
			sc := primitive.ConsistencyLevel(r.short("serial consistency"))
			b.SerialConsistency = &sc
		}
		if flags&qfTimestamp != 0 {
			ts := r.int64("default timestamp")
			b.DefaultTimestamp = &ts
		}
		if flags&qfNames != 0 {
			return nil, fmt.Errorf("BATCH: named values are not supported")
		}
		msg = b
	case primitive.OpCodeAuthResponse:
		msg = &message.AuthResponse{Token: r.bytes("token")}
	default:
		return nil, fmt.Errorf("unsupported request opcode %s", op)
	}
	if err := r.done(op.String()); err != nil {
		return nil, err
	}
	return msg, nil
}
