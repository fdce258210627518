package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/elasticity-dev/elasticity/emulator/engine"
	"github.com/elasticity-dev/elasticity/emulator/scyllalog"
)

// Snapshots as ScyllaDB takes them (db/snapshot-ctl.cc, replica/table.cc
// table::snapshot_on_all_shards, get_snapshot_details): after a flush, each
// table's sstables are hard-linked into a snapshot directory with a
// manifest.json naming them, so a snapshot costs no space until compaction
// replaces the files it shares with the table. A snapshot's "total" is the
// size of its files, "live" the size of those no longer in the table's
// data (a file only the snapshot holds). The emulator keeps one store for
// all tables, whose files can hold rows of neighbouring tables: a table's
// snapshot links every file that holds any of its rows, and a table with no
// rows links none.
//
// Layout: <data dir>/snapshots/<tag>/<keyspace>/<table>-<table id>/.

func (n *Node) snapshotRoot() string { return filepath.Join(n.cfg.DataDir, "snapshots") }

func tableDirName(t *engine.Table) string { return fmt.Sprintf("%s-%x", t.Name, t.ID) }

// takeSnapshot snapshots the tables (by keyspace) under tag and returns the
// directories written.
func (n *Node) takeSnapshot(tag string, tables map[string][]*engine.Table) ([]string, error) {
	n.api.snapMu.Lock()
	defer n.api.snapMu.Unlock()
	for ks, ts := range tables {
		for _, t := range ts {
			if _, err := os.Stat(filepath.Join(n.snapshotRoot(), tag, ks, tableDirName(t))); err == nil {
				return nil, runtimeError("Keyspace %s: snapshot %s already exists.", ks, tag)
			}
		}
	}
	var dirs []string
	for ks, ts := range tables {
		for _, t := range ts {
			dir := filepath.Join(n.snapshotRoot(), tag, ks, tableDirName(t))
			start := tableStart(t.ID)
			files, err := n.store.LinkFiles(dir, start, keyUpperBound(start))
			if err != nil {
				return dirs, runtimeError("snapshot %s of %s.%s: %v", tag, ks, t.Name, err)
			}
			manifest, _ := json.Marshal(map[string]any{"files": files})
			n.cfg.Life.Hold()
			if err := os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644); err != nil {
				return dirs, runtimeError("snapshot %s of %s.%s: %v", tag, ks, t.Name, err)
			}
			dirs = append(dirs, dir)
		}
	}
	n.log.Logf(scyllalog.Info, "snapshots", "Snapshot %s taken of %d tables", tag, len(dirs))
	return dirs, nil
}

// snapshotTable is one table of a snapshot as the API lists it.
type snapshotTable struct {
	Keyspace string `json:"ks"`
	Table    string `json:"cf"`
	Total    int64  `json:"total"`
	Live     int64  `json:"live"`
}

// snapshotDetails lists the snapshots by tag (GET /storage_service/snapshots).
func (n *Node) snapshotDetails() ([]kv, error) {
	n.api.snapMu.Lock()
	defer n.api.snapMu.Unlock()
	tags, err := os.ReadDir(n.snapshotRoot())
	if errors.Is(err, fs.ErrNotExist) {
		return []kv{}, nil
	} else if err != nil {
		return nil, err
	}
	out := []kv{}
	for _, tag := range tags {
		var tables []snapshotTable
		kss, _ := os.ReadDir(filepath.Join(n.snapshotRoot(), tag.Name()))
		for _, ks := range kss {
			tds, _ := os.ReadDir(filepath.Join(n.snapshotRoot(), tag.Name(), ks.Name()))
			for _, td := range tds {
				cf := td.Name()
				if i := strings.LastIndex(cf, "-"); i > 0 {
					cf = cf[:i]
				}
				total, live := n.store.LinkedSizes(filepath.Join(n.snapshotRoot(), tag.Name(), ks.Name(), td.Name()))
				tables = append(tables, snapshotTable{ks.Name(), cf, total, live})
			}
		}
		if len(tables) > 0 {
			out = append(out, kv{tag.Name(), tables})
		}
	}
	return out, nil
}

// clearSnapshots removes snapshot tag ("" for every tag) of the keyspaces
// ks (nil for all) and, if cf is not "", only of that table
// (snapshot_ctl::clear_snapshot).
func (n *Node) clearSnapshots(tag string, kss []string, cf string) error {
	n.api.snapMu.Lock()
	defer n.api.snapMu.Unlock()
	tags := []string{tag}
	if tag == "" {
		es, _ := os.ReadDir(n.snapshotRoot())
		tags = tags[:0]
		for _, e := range es {
			tags = append(tags, e.Name())
		}
	}
	for _, tg := range tags {
		base := filepath.Join(n.snapshotRoot(), tg)
		names := kss
		if len(names) == 0 {
			es, _ := os.ReadDir(base)
			for _, e := range es {
				names = append(names, e.Name())
			}
		}
		for _, ks := range names {
			if err := removeTableSnapshots(filepath.Join(base, ks), cf); err != nil {
				return err
			}
			os.Remove(filepath.Join(base, ks)) // only if now empty
		}
		os.Remove(base)
	}
	n.log.Logf(scyllalog.Info, "snapshots", "Cleared snapshot %q of keyspaces %v table %q", tag, kss, cf)
	return nil
}

// removeTableSnapshots removes a keyspace's table snapshot directories
// (only cf's when it is not "").
func removeTableSnapshots(ksDir, cf string) error {
	tds, err := os.ReadDir(ksDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	for _, td := range tds {
		name := td.Name()
		if i := strings.LastIndex(name, "-"); cf != "" && (i < 0 || name[:i] != cf) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(ksDir, name)); err != nil {
			return err
		}
	}
	return err
}

// sortedKeyspaces are the names of the keyspaces of the current schema.
func (n *Node) sortedKeyspaces() []string {
	var out []string
	for ks := range n.view.Load().m.Keyspaces {
		out = append(out, ks)
	}
	sort.Strings(out)
	return out
}
