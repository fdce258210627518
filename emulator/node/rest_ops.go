package node

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Per-keyspace operations and compaction control of the REST API:
// storage_service's keyspace_flush, keyspace_compaction, keyspace_cleanup,
// keyspace_scrub, keyspace_upgrade_sstables, keyspace_offstrategy_compaction,
// auto_compaction, tombstone_gc, compaction_throughput, stream_throughput
// and drop_quarantined_sstables (api/storage_service.cc), compaction_manager's
// stop and history (api/compaction_manager.cc), and column_family's
// per-table switches, major compaction and compaction strategy
// (api/column_family.cc).

// apiState is what the API's switches set on a node (all in memory, as
// ScyllaDB keeps them: a restart forgets them).
type apiState struct {
	mu sync.Mutex
	// Tables (by id) whose automatic compaction or tombstone GC the API
	// turned off (table::disable_auto_compaction, set_tombstone_gc_enabled).
	noAutoCompaction map[[16]byte]bool
	noTombstoneGC    map[[16]byte]bool
	// strategy is a table's compaction strategy set through the API
	// (column_family/compaction_strategy: not persisted in the schema).
	strategy map[[16]byte]string
	// Throughputs in MiB/s (0: unlimited), db::config's
	// compaction_throughput_mb_per_sec and stream_io_throughput_mb_per_sec.
	compactionMBps, streamMBps int64
	history                    []compactionRecord
	snapMu                     sync.Mutex // snapshots taken, listed or cleared one at a time
}

// compactionRecord is one row of system.compaction_history as the API shows it.
type compactionRecord struct {
	ID             string   `json:"id"`
	ShardID        int      `json:"shard_id"`
	Keyspace       string   `json:"ks"`
	Table          string   `json:"cf"`
	CompactionType string   `json:"compaction_type"`
	StartedAt      int64    `json:"started_at"`
	CompactedAt    int64    `json:"compacted_at"`
	BytesIn        int64    `json:"bytes_in"`
	BytesOut       int64    `json:"bytes_out"`
	RowsMerged     []kv     `json:"rows_merged"`
	SSTablesIn     []string `json:"sstables_in"`
	SSTablesOut    []string `json:"sstables_out"`
}

// tableInfos resolves ks and a comma-separated table list ("" for all the
// keyspace's tables) as parse_table_infos does, in the list's order.
func (n *Node) tableInfos(ks, list string) ([]*engine.Table, error) {
	v := n.view.Load()
	if v.m.Keyspaces[ks] == nil {
		return nil, noSuchKeyspace(ks)
	}
	var out []*engine.Table
	if list == "" {
		for _, t := range v.m.Tables[ks] {
			out = append(out, t)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out, nil
	}
	for _, name := range strings.Split(list, ",") {
		t := v.m.Tables[ks][name]
		if t == nil {
			return nil, noSuchTable(ks, name)
		}
		out = append(out, t)
	}
	return out, nil
}

// tableByName resolves column_family's {name} path parameter, "ks:cf"
// (api/column_family.cc get_uuid / parse_fully_qualified_cf_name).
func (n *Node) tableByName(name string) (*engine.Table, error) {
	ks, cf, ok := strings.Cut(name, ":")
	if !ok {
		return nil, badParam("Column family name should be in keyspace:column_family format")
	}
	t := n.view.Load().m.Tables[ks][cf]
	if t == nil {
		return nil, noSuchTable(ks, cf)
	}
	return t, nil
}

func tableNames(ts []*engine.Table) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = fmt.Sprintf("%s id=%s", t.Name, formatUUID(t.ID))
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// boolParam reads an optional boolean query parameter as validate_bool does
// (api/api.hh: "true"/"false", "1"/"0", case-insensitive).
func boolParam(r *http.Request, name string, def bool) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	switch strings.ToLower(s) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no":
		return false, nil
	}
	return false, badParam("Invalid boolean parameter value: %s", s)
}

// flushTables writes the memtable to sstables; the emulator's one memtable
// holds every table, so a keyspace's flush flushes them all, which is
// harmless (ScyllaDB's flush_tables_on_all_shards flushes the listed tables).
func (n *Node) flushTables() error {
	if err := n.store.Flush(); err != nil {
		return runtimeError("flush: %v", err)
	}
	n.disk.Refresh()
	return nil
}

func (n *Node) recordCompaction(ks, cf, kind string, began time.Time, in, out int64) {
	n.api.mu.Lock()
	defer n.api.mu.Unlock()
	n.api.history = append(n.api.history, compactionRecord{ID: newUUID(), Keyspace: ks, Table: cf, CompactionType: kind,
		StartedAt: began.UnixMilli(), CompactedAt: time.Now().UnixMilli(), BytesIn: in, BytesOut: out,
		RowsMerged: []kv{}, SSTablesIn: []string{}, SSTablesOut: []string{}})
	if len(n.api.history) > 1000 {
		n.api.history = n.api.history[1:]
	}
	n.log.Logf(scyllalog.Info, "compaction", "[Compact %s.%s] Compacted %d bytes to %d", ks, cf, in, out)
}

// setSwitch turns one of the per-table API switches on or off.
func (n *Node) setSwitch(m *map[[16]byte]bool, ts []*engine.Table, off bool) {
	n.api.mu.Lock()
	defer n.api.mu.Unlock()
	if *m == nil {
		*m = map[[16]byte]bool{}
	}
	for _, t := range ts {
		if off {
			(*m)[t.ID] = true
		} else {
			delete(*m, t.ID)
		}
	}
}

func (n *Node) switchOff(m *map[[16]byte]bool, t *engine.Table) bool {
	n.api.mu.Lock()
	defer n.api.mu.Unlock()
	return (*m)[t.ID]
}

// checkScrubOptions validates keyspace_scrub's options as
// parse_scrub_options does (api/storage_service.cc).
func checkScrubOptions(r *http.Request) error {
	q := r.URL.Query()
	mode := q.Get("scrub_mode")
	switch mode {
	case "", "ABORT", "SKIP", "SEGREGATE", "VALIDATE":
	default:
		return badParam("Unknown argument for 'scrub_mode' parameter: %s", mode)
	}
	if skip, err := boolParam(r, "skip_corrupted", false); err != nil {
		return err
	} else if mode == "" && skip {
		mode = "SKIP"
	}
	if mode == "" {
		mode = "VALIDATE"
	}
	switch qm := q.Get("quarantine_mode"); qm {
	case "", "INCLUDE", "EXCLUDE", "ONLY":
	default:
		return badParam("Unknown argument for 'quarantine_mode' parameter: %s", qm)
	}
	if drop, err := boolParam(r, "drop_unfixable_sstables", false); err != nil {
		return err
	} else if drop && mode != "SEGREGATE" {
		return badParam("The 'drop_unfixable_sstables' parameter is only valid when 'scrub_mode' is 'SEGREGATE'")
	}
	if q.Get("quarantine_invalid_sstables") != "" {
		if mode != "VALIDATE" {
			return badParam("The 'quarantine_invalid_sstables' parameter is only valid when 'scrub_mode' is 'VALIDATE'")
		}
		if _, err := boolParam(r, "quarantine_invalid_sstables", true); err != nil {
			return err
		}
	}
	return nil
}

// keyspaceOp registers a storage_service/{op}/{keyspace} route whose tables
// come from the cf query parameter (param names it when it is not "cf").
func (n *Node) keyspaceOp(rt *restRouter, pattern, param string, f func(r *http.Request, ks string, ts []*engine.Table) (any, error)) {
	rt.handle(pattern, func(r *http.Request) (any, error) {
		ks := r.PathValue("keyspace")
		ts, err := n.tableInfos(ks, r.URL.Query().Get(param))
		if err != nil {
			return nil, err
		}
		return f(r, ks, ts)
	})
}

func (n *Node) restOps(rt *restRouter) {
	// nodetool flush: "Flush all memtables in all keyspaces" (force_flush:
	// apilog.info("flush all tables"), database::flush_all_tables).
	rt.handle("POST /storage_service/flush", func(r *http.Request) (any, error) {
		n.log.Logf(scyllalog.Info, "api", "flush all tables")
		if err := n.flushTables(); err != nil {
			return nil, err
		}
		return voidReply{}, nil
	})
	n.keyspaceOp(rt, "POST /storage_service/keyspace_flush/{keyspace}", "cf", func(r *http.Request, ks string, ts []*engine.Table) (any, error) {
		n.log.Logf(scyllalog.Info, "api", "perform_keyspace_flush: keyspace=%s tables=%s", ks, tableNames(ts))
		if err := n.flushTables(); err != nil {
			return nil, err
		}
		return voidReply{}, nil
	})
	n.restCompactionOps(rt)
	for _, sw := range []struct {
		name string
		m    *map[[16]byte]bool
	}{{"auto_compaction", &n.api.noAutoCompaction}, {"tombstone_gc", &n.api.noTombstoneGC}} {
		for _, method := range []string{"POST", "DELETE"} {
			n.keyspaceOp(rt, method+" /storage_service/"+sw.name+"/{keyspace}", "cf", func(r *http.Request, ks string, ts []*engine.Table) (any, error) {
				n.log.Logf(scyllalog.Info, "api", "set_%s: enabled=%v keyspace=%s tables=%s", sw.name, method == "POST", ks, tableNames(ts))
				n.setSwitch(sw.m, ts, method == "DELETE")
				return voidReply{}, nil
			})
		}
		cfPath := map[string]string{"auto_compaction": "autocompaction", "tombstone_gc": "tombstone_gc"}[sw.name]
		rt.handle("GET /column_family/"+cfPath+"/{name}", func(r *http.Request) (any, error) {
			t, err := n.tableByName(r.PathValue("name"))
			if err != nil {
				return nil, err
			}
			return !n.switchOff(sw.m, t), nil
		})
		for _, method := range []string{"POST", "DELETE"} {
			rt.handle(method+" /column_family/"+cfPath+"/{name}", func(r *http.Request) (any, error) {
				t, err := n.tableByName(r.PathValue("name"))
				if err != nil {
					return nil, err
				}
				n.setSwitch(sw.m, []*engine.Table{t}, method == "DELETE")
				return voidReply{}, nil
			})
		}
	}
	for _, tp := range []struct {
		name string
		v    *int64
	}{{"compaction_throughput", &n.api.compactionMBps}, {"stream_throughput", &n.api.streamMBps}} {
		rt.handle("GET /storage_service/"+tp.name, func(r *http.Request) (any, error) {
			n.api.mu.Lock()
			defer n.api.mu.Unlock()
			return *tp.v, nil
		})
		rt.handle("POST /storage_service/"+tp.name, func(r *http.Request) (any, error) {
			s := r.URL.Query().Get("value")
			x, err := strconv.ParseInt(s, 10, 32)
			if err != nil || x < 0 {
				return nil, badParam("value (%s): type error - should be int32_t", s)
			}
			n.api.mu.Lock()
			*tp.v = x
			n.api.mu.Unlock()
			return voidReply{}, nil
		}, "value")
	}
	rt.handle("POST /storage_service/drop_quarantined_sstables", func(r *http.Request) (any, error) {
		// The emulator never quarantines sstables: only the names are checked.
		q := r.URL.Query()
		if ks := q.Get("keyspace"); ks != "" {
			if _, err := n.tableInfos(ks, q.Get("tables")); err != nil {
				return nil, err
			}
		}
		return voidReply{}, nil
	})
	n.restRepair(rt)
	n.restCompactionManager(rt)
	n.restColumnFamily(rt)
}

// repairOptions are the options repair_async takes; nodetool's legacy ones
// are ignored (api/storage_service.cc set_repair).
var (
	repairOptions       = map[string]bool{"primaryRange": true, "parallelism": true, "incremental": true, "jobThreads": true, "ranges": true, "columnFamilies": true, "dataCenters": true, "hosts": true, "ignore_nodes": true, "trace": true, "startToken": true, "endToken": true, "ranges_parallelism": true, "small_table_optimization": true}
	repairLegacyOptions = map[string]bool{"pullRepair": true, "ignoreUnreplicatedKeyspaces": true}
)

// restRepair adds repair_async (api/storage_service.cc set_repair,
// repair/repair.cc repair_start): a keyspace of local replication has
// nothing to repair and completes at once with its sequence number; a
// tablets keyspace is refused with 403 (tablets are repaired through
// storage_service/tablets/repair).
func (n *Node) restRepair(rt *restRouter) {
	rt.handle("POST /storage_service/repair_async/{keyspace}", func(r *http.Request) (any, error) {
		for o := range r.URL.Query() {
			if !repairOptions[o] && !repairLegacyOptions[o] {
				return nil, badParam("option %s is not supported", o)
			}
		}
		ks := r.PathValue("keyspace")
		if localKeyspaces[ks] {
			id := n.tasks.nextSeq("repair")
			n.log.Logf(scyllalog.Info, "repair", "repair[%d]: completed successfully: nothing to repair for keyspace %s with local replication strategy", id, ks)
			return id, nil
		}
		k := n.view.Load().m.Keyspaces[ks]
		if k == nil {
			return nil, noSuchKeyspace(ks)
		}
		if k.TabletsEnabled {
			return nil, &restError{http.StatusForbidden, "Cannot repair tablet keyspace. Use /storage_service/tablets/repair to repair tablet keyspaces."}
		}
		return n.startRepair(r, ks, k)
	})
	rt.handle("GET /storage_service/repair_async/{keyspace}", func(r *http.Request) (any, error) {
		id, err := strconv.Atoi(r.URL.Query().Get("id"))
		if err != nil {
			return nil, badParam("id (%s): type error - should be int", r.URL.Query().Get("id"))
		}
		return n.repairStatus(id)
	}, "id")
	// repair_await_completion: the status once the repair finished, or
	// when timeout seconds passed (-1 or none: no timeout).
	rt.handle("GET /storage_service/repair_status", func(r *http.Request) (any, error) {
		id, err := strconv.Atoi(r.URL.Query().Get("id"))
		if err != nil {
			return nil, badParam("id (%s): type error - should be int", r.URL.Query().Get("id"))
		}
		deadline := time.Duration(math.MaxInt64)
		if s := r.URL.Query().Get("timeout"); s != "" {
			secs, err := strconv.ParseInt(s, 10, 64)
			if err != nil || secs < -1 {
				return nil, badParam("timeout can only be -1 (means no timeout) or non negative integer")
			}
			if secs >= 0 {
				deadline = time.Duration(secs) * time.Second
			}
		}
		n.repairs.mu.Lock()
		job := n.repairs.jobs[id]
		n.repairs.mu.Unlock()
		if job == nil {
			return nil, badParam("unknown repair id %d", id)
		}
		t := time.NewTimer(deadline)
		defer t.Stop()
		select {
		case <-job.done:
		case <-t.C:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		return n.repairStatus(id)
	}, "id")
}

func scrubModeName(mode string) string {
	if mode == "" {
		return "validate"
	}
	return strings.ToLower(mode)
}

// restCompactionManager adds compaction_manager's routes
// (api/compaction_manager.cc).
func (n *Node) restCompactionManager(rt *restRouter) {
	// A compaction the API stops would be retried by the compaction
	// manager; the emulator's run to completion, so stop has nothing to
	// cancel (compaction_manager::stop_compaction of an idle manager).
	rt.handle("POST /compaction_manager/stop_compaction", func(r *http.Request) (any, error) {
		return voidReply{}, nil
	}, "type")
	rt.handle("POST /compaction_manager/stop_keyspace_compaction/{keyspace}", func(r *http.Request) (any, error) {
		if _, err := n.tableInfos(r.PathValue("keyspace"), r.URL.Query().Get("tables")); err != nil {
			return nil, err
		}
		return voidReply{}, nil
	}, "type")
	rt.handle("GET /compaction_manager/compaction_history", func(r *http.Request) (any, error) {
		n.api.mu.Lock()
		defer n.api.mu.Unlock()
		return append([]compactionRecord{}, n.api.history...), nil
	})
	rt.handle("GET /compaction_manager/compactions", func(r *http.Request) (any, error) { return []any{}, nil })
	rt.handle("GET /compaction_manager/metrics/pending_tasks", func(r *http.Request) (any, error) {
		return n.store.compactionStats().pending, nil
	})
}

// restColumnFamily adds column_family's per-table routes (api/column_family.cc).
func (n *Node) restColumnFamily(rt *restRouter) {
	rt.handle("GET /column_family/name", func(r *http.Request) (any, error) {
		out := []string{}
		v := n.view.Load()
		for ks, ts := range v.m.Tables {
			for cf := range ts {
				out = append(out, ks+":"+cf)
			}
		}
		sort.Strings(out)
		return out, nil
	})
	rt.handle("GET /column_family/name/keyspace", func(r *http.Request) (any, error) {
		out := []string{}
		for ks := range n.view.Load().m.Keyspaces {
			out = append(out, ks)
		}
		sort.Strings(out)
		return out, nil
	})
	rt.handle("POST /column_family/major_compaction/{name}", func(r *http.Request) (any, error) {
		t, err := n.tableByName(r.PathValue("name"))
		if err != nil {
			return nil, err
		}
		op, err := n.majorCompactionOp(r, t.Keyspace, []*engine.Table{t})
		if err != nil {
			return nil, err
		}
		if _, err := n.runKeyspaceTask(r.Context(), "major compaction", t.Keyspace, []*engine.Table{t}, true, op); err != nil {
			return nil, runtimeError("%v", err)
		}
		return voidReply{}, nil
	})
	rt.handle("GET /column_family/compaction_strategy/{name}", func(r *http.Request) (any, error) {
		t, err := n.tableByName(r.PathValue("name"))
		if err != nil {
			return nil, err
		}
		n.api.mu.Lock()
		s := n.api.strategy[t.ID]
		n.api.mu.Unlock()
		if s == "" {
			s = strategyName(t.Options["compaction"])
		}
		return s, nil
	})
	rt.handle("POST /column_family/compaction_strategy/{name}", func(r *http.Request) (any, error) {
		t, err := n.tableByName(r.PathValue("name"))
		if err != nil {
			return nil, err
		}
		cls := strategyName(r.URL.Query().Get("class_name"))
		if !knownStrategies[cls] {
			return nil, &restError{http.StatusInternalServerError, fmt.Sprintf("exceptions::configuration_exception (Unable to find compaction strategy class '%s')", r.URL.Query().Get("class_name"))}
		}
		n.api.mu.Lock()
		defer n.api.mu.Unlock()
		if n.api.strategy == nil {
			n.api.strategy = map[[16]byte]string{}
		}
		n.api.strategy[t.ID] = cls
		return voidReply{}, nil
	}, "class_name")
	rt.handle("GET /column_family/metrics/live_disk_space_used/{name}", n.tableDiskUsage)
	rt.handle("GET /column_family/metrics/total_disk_space_used/{name}", n.tableDiskUsage)
}

func (n *Node) tableDiskUsage(r *http.Request) (any, error) {
	t, err := n.tableByName(r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	start := tableStart(t.ID)
	return n.store.DiskUsage(start, keyUpperBound(start)), nil
}

// knownStrategies are the compaction strategies ScyllaDB has
// (compaction/compaction_strategy.cc compaction_strategy::type).
var knownStrategies = map[string]bool{"NullCompactionStrategy": true, "SizeTieredCompactionStrategy": true,
	"LeveledCompactionStrategy": true, "TimeWindowCompactionStrategy": true, "IncrementalCompactionStrategy": true,
	"InMemoryCompactionStrategy": true}

// strategyName is a compaction class's short name, as the API names it
// (compaction_strategy::name): the table option is the CQL map as JSON, the
// class maybe qualified ("org.apache.cassandra.db.compaction.X"). An unset
// option is the default the CQL front end shows in system_schema.tables.
func strategyName(opt string) string {
	var m map[string]string
	if json.Unmarshal([]byte(opt), &m) == nil {
		opt = m["class"]
	}
	if i := strings.LastIndex(opt, "."); i >= 0 {
		opt = opt[i+1:]
	}
	if opt == "" {
		return "SizeTieredCompactionStrategy"
	}
	return opt
}
