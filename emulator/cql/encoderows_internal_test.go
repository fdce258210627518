package cql

import (
	"bytes"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// encodeRows writes what the codec writes, byte for byte, for the rows
// answers it takes, and leaves the others to the codec.
func TestEncodeRowsIsTheCodecs(t *testing.T) {
	c := &conn{s: &Server{codec: frame.NewRawCodec()}}
	kb := bytes.Repeat([]byte{7}, 1024)
	for i, m := range []*message.RowsResult{
		{Metadata: &message.RowsMetadata{ColumnCount: 1}, Data: message.RowSet{{kb}}},
		{Metadata: &message.RowsMetadata{ColumnCount: 1}},
		{Metadata: &message.RowsMetadata{ColumnCount: 3}, Data: message.RowSet{{nil, {}, {1, 2}}, {{3}, nil, nil}}},
		{Metadata: &message.RowsMetadata{ColumnCount: 0}, Data: message.RowSet{{}}},
	} {
		for _, v := range []primitive.ProtocolVersion{primitive.ProtocolVersion3, primitive.ProtocolVersion4} {
			for _, stream := range []int16{0, 1, 300, -2, 32767} {
				got, ok := encodeRows(v, stream, m)
				if !ok {
					t.Fatalf("case %d: not taken", i)
				}
				want, err := c.encode(v, stream, m, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("case %d v%d stream %d:\n got %x\nwant %x", i, v, stream, got, want)
				}
			}
		}
	}
	v := &message.ColumnMetadata{Keyspace: "ks", Table: "t", Name: "v", Type: datatype.Blob}
	k := &message.ColumnMetadata{Keyspace: "ks", Table: "t", Name: "k", Type: datatype.Bigint}
	other := &message.ColumnMetadata{Keyspace: "ks2", Table: "u", Name: "when", Type: datatype.Timestamp}
	for i, m := range []*message.RowsResult{
		{Metadata: &message.RowsMetadata{ColumnCount: 1, Columns: []*message.ColumnMetadata{v}}, Data: message.RowSet{{kb}}},
		{Metadata: &message.RowsMetadata{ColumnCount: 2, Columns: []*message.ColumnMetadata{k, v}}, Data: message.RowSet{{{0, 0, 0, 0, 0, 0, 0, 1}, nil}}},
		{Metadata: &message.RowsMetadata{ColumnCount: 2, Columns: []*message.ColumnMetadata{k, other}}},
	} {
		for _, ver := range []primitive.ProtocolVersion{primitive.ProtocolVersion3, primitive.ProtocolVersion4} {
			got, ok := encodeRows(ver, 5, m)
			if !ok {
				t.Fatalf("case %d with columns: not taken", i)
			}
			want, err := c.encode(ver, 5, m, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("case %d with columns v%d:\n got %x\nwant %x", i, ver, got, want)
			}
		}
	}
	list := &message.ColumnMetadata{Keyspace: "ks", Table: "t", Name: "l", Type: datatype.NewList(datatype.Int)}
	for i, m := range []*message.RowsResult{
		{Metadata: &message.RowsMetadata{ColumnCount: 1, Columns: []*message.ColumnMetadata{list}}},
		{Metadata: &message.RowsMetadata{ColumnCount: 2, Columns: []*message.ColumnMetadata{v}}},
		{Metadata: &message.RowsMetadata{ColumnCount: 1, PagingState: []byte{1}}},
		{Metadata: &message.RowsMetadata{ColumnCount: 1, NewResultMetadataId: []byte{1}}},
		{},
	} {
		if _, ok := encodeRows(primitive.ProtocolVersion4, 1, m); ok {
			t.Errorf("case %d: taken, the codec's to encode", i)
		}
	}
}
