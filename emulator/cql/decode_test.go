package cql

import (
	"bytes"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

func encodeBody(t testing.TB, msg message.Message) []byte {
	var buf bytes.Buffer
	if err := frame.NewCodec().EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, 1, msg), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()[9:]
}

func TestDecodeMatchesLibrary(t *testing.T) {
	ts := int64(42)
	msgs := []message.Message{
		&message.Query{Query: "SELECT * FROM t WHERE k = ?", Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelQuorum,
			PositionalValues: []*primitive.Value{primitive.NewValue([]byte{1, 2}), primitive.NewValue(nil), primitive.NewUnsetValue()},
			PageSize:         100, PagingState: []byte{9}, DefaultTimestamp: &ts, SkipMetadata: true}},
		&message.Execute{QueryId: []byte{1, 2, 3}, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}},
		&message.Batch{Type: primitive.BatchTypeUnlogged, Consistency: primitive.ConsistencyLevelAll, DefaultTimestamp: &ts, Children: []*message.BatchChild{
			{Query: "INSERT INTO t (k) VALUES (?)", Values: []*primitive.Value{primitive.NewValue([]byte{7})}},
			{Id: []byte{5, 5}},
		}},
		&message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}},
		&message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}},
		&message.Prepare{Query: "SELECT 1"},
		&message.Options{},
	}
	for _, m := range msgs {
		got, err := decodeRequest(m.GetOpCode(), 0, encodeBody(t, m))
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if !bytes.Equal(encodeBody(t, got), encodeBody(t, m)) {
			t.Errorf("decoded %v, want %v", got, m)
		}
	}
}

func FuzzDecodeRequest(f *testing.F) {
	ts := int64(1)
	f.Add(byte(primitive.OpCodeQuery), encodeBody(f, &message.Query{Query: "SELECT", Options: &message.QueryOptions{PositionalValues: []*primitive.Value{primitive.NewValue([]byte{1})}, PageSize: 5, DefaultTimestamp: &ts}}))
	f.Add(byte(primitive.OpCodeBatch), encodeBody(f, &message.Batch{Children: []*message.BatchChild{{Query: "x"}, {Id: []byte{1}}}}))
	f.Add(byte(primitive.OpCodeStartup), encodeBody(f, &message.Startup{Options: map[string]string{"A": "B"}}))
	f.Add(byte(primitive.OpCodeQuery), []byte{0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, op byte, body []byte) {
		_, _ = decodeRequest(primitive.OpCode(op), 0, body)
		_, _ = decodeRequest(primitive.OpCode(op), primitive.HeaderFlagCustomPayload, body)
	})
}
