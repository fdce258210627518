package node

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// naturalEndpoints answers GET /storage_service/natural_endpoints/{keyspace}
// ?cf=TABLE&key=KEY as ScyllaDB does (api/storage_service.cc
// rest_get_natural_endpoints, service/storage_service.cc
// get_natural_endpoints): KEY is the partition key in nodetool style
// (partition_key::from_nodetool_style_string), the answer the addresses of
// the token's natural replicas, from the table's tablet map in a tablets
// keyspace and from the keyspace's ring otherwise. Pending replicas of a
// migration are not natural replicas and are left out.
func (n *Node) naturalEndpoints(ks, cf, key string) ([]string, error) {
	v := n.view.Load()
	k, t, err := n.lookup(v, ks, cf)
	if err != nil {
		return nil, err
	}
	var pkCols []engine.Column
	for _, c := range t.Columns {
		if c.Kind == engine.PartitionKey {
			pkCols = append(pkCols, c)
		}
	}
	if len(pkCols) != 1 {
		return nil, fmt.Errorf("table %s.%s: only single-column partition keys are supported", ks, cf)
	}
	pk, err := nodetoolKey(pkCols[0].Type, key)
	if err != nil {
		return nil, err
	}
	reps, _ := v.replicasOf(k, t, Token(pk))
	out := []string{}
	for _, r := range reps {
		if nm := v.m.Nodes[r.Host]; nm != nil {
			out = append(out, nm.Addr)
		}
	}
	return out, nil
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

// restData adds the data endpoints to mux.
func (n *Node) restData(mux *http.ServeMux, js func(http.ResponseWriter, any), fail func(http.ResponseWriter, int, error)) {
	mux.HandleFunc("GET /storage_service/natural_endpoints/{keyspace}", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("cf") == "" || !q.Has("key") {
			fail(w, http.StatusBadRequest, errMissing("cf and key"))
			return
		}
		eps, err := n.naturalEndpoints(r.PathValue("keyspace"), q.Get("cf"), q.Get("key"))
		if err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
		js(w, eps)
	})
	mux.HandleFunc("POST /elasticity/fault/drop_local_data", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		first, last := int64(math.MinInt64), int64(math.MaxInt64)
		var err error
		if s := q.Get("first_token"); s != "" {
			if first, err = strconv.ParseInt(s, 10, 64); err != nil {
				fail(w, http.StatusBadRequest, errMissing("first_token"))
				return
			}
		}
		if s := q.Get("last_token"); s != "" {
			if last, err = strconv.ParseInt(s, 10, 64); err != nil {
				fail(w, http.StatusBadRequest, errMissing("last_token"))
				return
			}
		}
		if q.Get("keyspace") == "" || q.Get("table") == "" || first > last {
			fail(w, http.StatusBadRequest, errMissing("keyspace, table and first_token <= last_token"))
			return
		}
		if err := n.dropLocalData(q.Get("keyspace"), q.Get("table"), first, last); err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
		js(w, nil)
	})
}
