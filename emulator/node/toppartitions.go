package node

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// nodetool toppartitions (api/column_family.cc rest_toppartitions_generic,
// api/storage_service.cc run_toppartitions_query, db/data_listeners.cc):
// for the query's duration the replica's reads and writes of the selected
// tables are counted per partition, and the most frequent are answered,
// each named "(ks:cf) key" with the key as CQL prints its components.

// topQuery is one running toppartitions query.
type topQuery struct {
	tables    map[string]bool // "ks:cf"; nil with keyspaces nil: all
	keyspaces map[string]bool
	capacity  int
	mu        sync.Mutex
	reads     map[topKey]int64
	writes    map[topKey]int64
}

type topKey struct{ ks, cf, pk string }

// topSampler holds the running queries; the data path asks it only while
// one runs.
type topSampler struct {
	active  atomic.Int32
	mu      sync.Mutex
	queries map[*topQuery]bool
}

func (q *topQuery) selects(ks, cf string) bool {
	if q.tables == nil && q.keyspaces == nil {
		return true
	}
	return q.tables[ks+":"+cf] || q.keyspaces[ks]
}

// sample counts one replica read or write of partition pk of t.
func (s *topSampler) sample(write bool, t *engine.Table, pk []byte) {
	if s.active.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for q := range s.queries {
		if !q.selects(t.Keyspace, t.Name) {
			continue
		}
		k := topKey{t.Keyspace, t.Name, string(pk)}
		q.mu.Lock()
		m := q.reads
		if write {
			m = q.writes
		}
		// Keys beyond the capacity are not tracked (the space-saving
		// sketch's capacity, utils/top_k.hh).
		if _, ok := m[k]; ok || len(m) < q.capacity {
			m[k]++
		}
		q.mu.Unlock()
	}
}

func (s *topSampler) start(q *topQuery) {
	s.mu.Lock()
	if s.queries == nil {
		s.queries = map[*topQuery]bool{}
	}
	s.queries[q] = true
	s.mu.Unlock()
	s.active.Add(1)
}

func (s *topSampler) stop(q *topQuery) {
	s.mu.Lock()
	delete(s.queries, q)
	s.mu.Unlock()
	s.active.Add(-1)
}

type topRecord struct {
	Partition string `json:"partition"`
	Count     int64  `json:"count"`
	Error     int64  `json:"error"`
}

type topResults struct {
	ReadCardinality  int         `json:"read_cardinality"`
	Read             []topRecord `json:"read"`
	WriteCardinality int         `json:"write_cardinality"`
	Write            []topRecord `json:"write"`
}

// top lists the listSize most counted partitions of m.
func (n *Node) top(m map[topKey]int64, listSize int) []topRecord {
	out := []topRecord{}
	v := n.view.Load()
	for k, c := range m {
		name := hex.EncodeToString([]byte(k.pk))
		if t := v.m.Tables[k.ks][k.cf]; t != nil {
			name = formatPartitionKey(t, []byte(k.pk))
		}
		out = append(out, topRecord{Partition: "(" + k.ks + ":" + k.cf + ") " + name, Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Partition < out[j].Partition
	})
	if len(out) > listSize {
		out = out[:listSize]
	}
	return out
}

// formatPartitionKey prints a partition key as ScyllaDB does: each
// component as its type's to_string, joined by ':' (keys/keys.cc).
func formatPartitionKey(t *engine.Table, pk []byte) string {
	var types []string
	for _, c := range t.Columns {
		if c.Kind == engine.PartitionKey {
			types = append(types, c.Type)
		}
	}
	parts := [][]byte{pk}
	if len(types) > 1 {
		parts = parts[:0]
		for b := pk; len(b) >= 2; {
			l := int(binary.BigEndian.Uint16(b))
			if len(b) < 2+l+1 {
				break
			}
			parts = append(parts, b[2:2+l])
			b = b[2+l+1:]
		}
	}
	var out []string
	for i, p := range parts {
		typ := ""
		if i < len(types) {
			typ = types[i]
		}
		out = append(out, valueString(typ, p))
	}
	return strings.Join(out, ":")
}

// valueString is a value as its type's to_string prints it.
func valueString(typ string, b []byte) string {
	switch {
	case typ == "text" || typ == "varchar" || typ == "ascii":
		return string(b)
	case (typ == "bigint" || typ == "counter" || typ == "timestamp") && len(b) == 8:
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(b)), 10)
	case typ == "int" && len(b) == 4:
		return strconv.FormatInt(int64(int32(binary.BigEndian.Uint32(b))), 10)
	case typ == "smallint" && len(b) == 2:
		return strconv.FormatInt(int64(int16(binary.BigEndian.Uint16(b))), 10)
	case typ == "double" && len(b) == 8:
		return strconv.FormatFloat(math.Float64frombits(binary.BigEndian.Uint64(b)), 'g', -1, 64)
	case (typ == "uuid" || typ == "timeuuid") && len(b) == 16:
		var u [16]byte
		copy(u[:], b)
		return formatUUID(u)
	}
	return hex.EncodeToString(b)
}

// restTopPartitions adds storage_service/toppartitions.
func (n *Node) restTopPartitions(rt *restRouter) {
	rt.handle("GET /storage_service/toppartitions", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		uintParam := func(name string, def int) (int, error) {
			s := q.Get(name)
			if s == "" {
				return def, nil
			}
			x, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return 0, badParam("%s (%s): type error - should be unsigned int", name, s)
			}
			return int(x), nil
		}
		duration, err := uintParam("duration", 1000)
		if err != nil {
			return nil, err
		}
		capacity, err := uintParam("capacity", 256)
		if err != nil {
			return nil, err
		}
		listSize, err := uintParam("list_size", 10)
		if err != nil {
			return nil, err
		}
		query := &topQuery{capacity: capacity, reads: map[topKey]int64{}, writes: map[topKey]int64{}}
		if f := q.Get("table_filters"); f != "" {
			query.tables = map[string]bool{}
			for _, name := range strings.Split(f, ",") {
				if !strings.Contains(name, ":") {
					return nil, badParam("Column family name should be in keyspace:column_family format")
				}
				query.tables[name] = true
			}
		}
		if f := q.Get("keyspace_filters"); f != "" {
			query.keyspaces = map[string]bool{}
			for _, ks := range strings.Split(f, ",") {
				query.keyspaces[ks] = true
			}
		}
		n.log.Logf(scyllalog.Info, "api", "toppartitions query: #table_filters=%s #keyspace_filters=%s duration=%dms list_size=%d capacity=%d",
			filterCount(len(query.tables)), filterCount(len(query.keyspaces)), duration, listSize, capacity)
		n.topSampler.start(query)
		t := time.NewTimer(time.Duration(duration) * time.Millisecond)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
		n.topSampler.stop(query)
		query.mu.Lock()
		defer query.mu.Unlock()
		return topResults{ReadCardinality: len(query.reads), Read: n.top(query.reads, listSize),
			WriteCardinality: len(query.writes), Write: n.top(query.writes, listSize)}, nil
	}, "duration")
}

func filterCount(c int) string {
	if c == 0 {
		return "all"
	}
	return strconv.Itoa(c)
}
