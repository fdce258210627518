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
	var list []byte
	list = binary.BigEndian.AppendUint32(list, uint32(len(rt.Replicas)))
	for _, r := range rt.Replicas {
		list = binary.BigEndian.AppendUint32(list, 4+16+4+4) // the replica tuple
		list = binary.BigEndian.AppendUint32(list, 16)
		list = append(list, r.HostID[:]...)
		list = binary.BigEndian.AppendUint32(list, 4)
		list = binary.BigEndian.AppendUint32(list, uint32(int32(r.Shard)))
	}
	var b []byte
	b = binary.BigEndian.AppendUint32(b, 8)
	b = binary.BigEndian.AppendUint64(b, uint64(rt.FirstToken))
	b = binary.BigEndian.AppendUint32(b, 8)
	b = binary.BigEndian.AppendUint64(b, uint64(rt.LastToken))
	b = binary.BigEndian.AppendUint32(b, uint32(len(list)))
	return append(b, list...)
}
