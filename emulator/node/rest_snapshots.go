package node

import (
	"net/http"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// Snapshot routes of the REST API (api/storage_service.cc set_snapshot:
// get_snapshot_details, take_snapshot, del_snapshot, true_snapshots_size);
// the snapshots themselves are snapshot.go's.

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (n *Node) restSnapshots(rt *restRouter) {
	rt.handle("GET /storage_service/snapshots", func(r *http.Request) (any, error) {
		return n.snapshotDetails()
	})
	rt.handle("POST /storage_service/snapshots", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		tag, kss, cfs := q.Get("tag"), splitList(q.Get("kn")), splitList(q.Get("cf"))
		if tag == "" {
			return nil, runtimeError("You must supply a snapshot name.")
		}
		if len(cfs) > 0 && len(kss) == 0 {
			return nil, badParam("The keyspace of column families must be specified")
		}
		if len(cfs) > 0 && len(kss) > 1 {
			return nil, badParam("Only one keyspace allowed when specifying a column family")
		}
		if len(kss) == 0 {
			kss = n.sortedKeyspaces()
		}
		tables := map[string][]*engine.Table{}
		for _, ks := range kss {
			ts, err := n.tableInfos(ks, q.Get("cf"))
			if err != nil {
				return nil, err
			}
			tables[ks] = ts
		}
		if !strings.EqualFold(q.Get("sf"), "true") {
			if err := n.flushTables(); err != nil {
				return nil, err
			}
		}
		if _, err := n.takeSnapshot(tag, tables); err != nil {
			return nil, err
		}
		return voidReply{}, nil
	})
	rt.handle("DELETE /storage_service/snapshots", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		kss, cf := splitList(q.Get("kn")), q.Get("cf")
		v := n.view.Load()
		for _, ks := range kss {
			if v.m.Keyspaces[ks] == nil {
				return nil, noSuchKeyspace(ks)
			}
			if cf != "" && v.m.Tables[ks][cf] == nil {
				return nil, noSuchTable(ks, cf)
			}
		}
		if err := n.clearSnapshots(q.Get("tag"), kss, cf); err != nil {
			return nil, runtimeError("%v", err)
		}
		return voidReply{}, nil
	})
	// The bytes snapshots hold that the tables no longer do.
	rt.handle("GET /storage_service/snapshots/size/true", func(r *http.Request) (any, error) {
		details, err := n.snapshotDetails()
		if err != nil {
			return nil, err
		}
		var live int64
		for _, d := range details {
			for _, t := range d.Value.([]snapshotTable) {
				live += t.Live
			}
		}
		return live, nil
	})
}
