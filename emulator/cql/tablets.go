package cql

import (
	"encoding/binary"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// tabletsRoutingPayload serializes a tablet's routing as ScyllaDB's
// result_message::add_tablet_info (transport/messages/result_message.cc):
// the tuple<bigint, bigint, list<tuple<uuid, int>>> of its first and last
// token and its replicas (host, shard), each element a [bytes] value.
func tabletsRoutingPayload(rt *engine.TabletRoute) []byte {
	list := encReplicaSet(rt.Replicas)
	var b []byte
	b = binary.BigEndian.AppendUint32(b, 8)
	b = binary.BigEndian.AppendUint64(b, uint64(rt.FirstToken))
	b = binary.BigEndian.AppendUint32(b, 8)
	b = binary.BigEndian.AppendUint64(b, uint64(rt.LastToken))
	b = binary.BigEndian.AppendUint32(b, uint32(len(list)))
	return append(b, list...)
}
