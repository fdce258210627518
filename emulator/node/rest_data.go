package node

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// naturalEndpoints answers GET /storage_service/natural_endpoints/{keyspace}
// ?cf=TABLE&key=KEY (and /v2 with key_component=C repeated) as ScyllaDB does
// (api/storage_service.cc rest_get_natural_endpoints{,_v2},
// service/storage_service.cc get_natural_endpoints): KEY is the partition
// key in nodetool style, split at ':' only when the key has several columns
// (keys/keys.cc partition_key::from_nodetool_style_string, #16596), each
// component parsed by its type's from_string; the answer is the addresses
// of the token's natural replicas, from the table's tablet map in a tablets
// keyspace and from the keyspace's ring otherwise. Pending replicas of a
// migration are not natural replicas and are left out.
func (n *Node) naturalEndpoints(ks, cf string, components []string, nodetoolStyle bool) ([]string, error) {
	v := n.view.Load()
	if v.m.Keyspaces[ks] == nil {
		return nil, noSuchKeyspace(ks)
	}
	k, t, err := n.lookup(v, ks, cf)
	if err != nil {
		return nil, &restError{http.StatusInternalServerError, fmt.Sprintf("data_dictionary::no_such_column_family (Can't find a column family %s in keyspace %s)", cf, ks)}
	}
	var pkCols []engine.Column
	for _, c := range t.Columns {
		if c.Kind == engine.PartitionKey {
			pkCols = append(pkCols, c)
		}
	}
	if nodetoolStyle && len(pkCols) > 1 {
		components = strings.Split(components[0], ":")
	}
	if len(components) != len(pkCols) {
		return nil, &restError{http.StatusInternalServerError, fmt.Sprintf("std::invalid_argument (partition key '%v' has mismatch number of components: expected %d, got %d)", components, len(pkCols), len(components))}
	}
	parts := make([][]byte, len(pkCols))
	for i, c := range pkCols {
		if parts[i], err = nodetoolKey(c.Type, components[i]); err != nil {
			return nil, &restError{http.StatusInternalServerError, "marshal_exception (" + err.Error() + ")"}
		}
	}
	reps, _ := v.replicasOf(k, t, Token(compositeKey(parts)))
	out := []string{}
	for _, r := range reps {
		if nm := v.m.Nodes[r.Host]; nm != nil {
			out = append(out, nm.Addr)
		}
	}
	return out, nil
}

// compositeKey is a partition key's serialised form, the bytes its token is
// computed from: a single column's value, or each column as a 2-byte
// length, the value and a 0 end-of-component byte (keys/compound_compat.hh,
// composite::serialize_value; the CQL front end builds the same).
func compositeKey(parts [][]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	var out []byte
	for _, p := range parts {
		out = binary.BigEndian.AppendUint16(out, uint16(len(p)))
		out = append(out, p...)
		out = append(out, 0)
	}
	return out
}

// nodetoolKey serialises a nodetool-style key string of a CQL type (the
// types' from_string, types/types.cc).
func nodetoolKey(typ, s string) ([]byte, error) {
	parseInt := func(bits int) (int64, error) {
		x, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return 0, fmt.Errorf("Failed to parse %q as %s", s, typ)
		}
		return x, nil
	}
	switch typ {
	case "bigint", "counter", "timestamp":
		x, err := parseInt(64)
		return binary.BigEndian.AppendUint64(nil, uint64(x)), err
	case "int":
		x, err := parseInt(32)
		return binary.BigEndian.AppendUint32(nil, uint32(x)), err
	case "smallint":
		x, err := parseInt(16)
		return binary.BigEndian.AppendUint16(nil, uint16(x)), err
	case "double":
		f, err := strconv.ParseFloat(s, 64)
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), err
	case "text", "varchar", "ascii":
		return []byte(s), nil
	case "blob":
		return hex.DecodeString(s)
	}
	return nil, fmt.Errorf("partition key type %s is not supported by this emulator", typ)
}

// dropLocalData removes this node's own copy of a table's rows in tokens
// [first, last] straight from its store: a replica that lost data behind
// the cluster's back (a bad disk, an operator's rm). This is a fault of the
// emulator, reached at /elasticity/fault/drop_local_data, a path ScyllaDB
// does not have; the framework never calls it (tests and hooks do).
func (n *Node) dropLocalData(ks, cf string, first, last int64) error {
	v := n.view.Load()
	_, t, err := n.lookup(v, ks, cf)
	if err != nil {
		return err
	}
	start, end := tokenRangeKeys(t.ID, first, last)
	if err := n.store.DeleteRange(start, end, false); err != nil {
		return err
	}
	n.log.Logf(scyllalog.Info, "fault", "dropped local data of %s.%s in tokens [%d, %d] (fault injection)", ks, cf, first, last)
	return nil
}

// restData adds the data endpoints.
func (n *Node) restData(rt *restRouter) {
	rt.handle("GET /storage_service/natural_endpoints/{keyspace}", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		return n.naturalEndpoints(r.PathValue("keyspace"), q.Get("cf"), []string{q.Get("key")}, true)
	}, "cf", "key")
	rt.handle("GET /storage_service/natural_endpoints/v2/{keyspace}", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		return n.naturalEndpoints(r.PathValue("keyspace"), q.Get("cf"), q["key_component"], false)
	}, "cf", "key_component")
	rt.handle("POST /elasticity/fault/drop_local_data", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		first, last := int64(math.MinInt64), int64(math.MaxInt64)
		var err error
		if s := q.Get("first_token"); s != "" {
			if first, err = strconv.ParseInt(s, 10, 64); err != nil {
				return nil, badParam("first_token (%s): type error - should be long", s)
			}
		}
		if s := q.Get("last_token"); s != "" {
			if last, err = strconv.ParseInt(s, 10, 64); err != nil {
				return nil, badParam("last_token (%s): type error - should be long", s)
			}
		}
		if first > last {
			return nil, badParam("first_token %d is after last_token %d", first, last)
		}
		if err := n.dropLocalData(q.Get("keyspace"), q.Get("table"), first, last); err != nil {
			return nil, badParam("%v", err)
		}
		return voidReply{}, nil
	}, "keyspace", "table")
}
