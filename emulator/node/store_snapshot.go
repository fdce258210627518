package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble"
)

// LinkFiles hard-links into dir the store's sstables that hold keys of
// [start, end) and returns their names, after flushing the memtable (a
// snapshot's files, replica/table.cc table::snapshot). A range without a
// live key links nothing. A file a compaction removes while it is being
// linked makes the listing start over.
func (s *Store) LinkFiles(dir string, start, end []byte) ([]string, error) {
	s.life.Hold()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if empty, err := s.emptyRange(start, end); err != nil || empty {
		return []string{}, err
	}
	for attempt := 0; ; attempt++ {
		names, err := s.linkOnce(dir, start, end)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 4 {
			return names, err
		}
		for _, n := range names {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

func (s *Store) linkOnce(dir string, start, end []byte) ([]string, error) {
	levels, err := s.db.SSTables(pebble.WithKeyRangeFilter(start, end))
	if err != nil {
		return nil, fmt.Errorf("listing sstables: %w", err)
	}
	names := []string{}
	seen := map[string]bool{}
	for _, level := range levels {
		for _, t := range level {
			name := t.BackingSSTNum.String() + ".sst"
			if seen[name] {
				continue
			}
			seen[name] = true
			if err := os.Link(filepath.Join(s.dir, name), filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrExist) {
				return names, err
			}
			names = append(names, name)
		}
	}
	return names, nil
}

// emptyRange says whether [start, end) holds no live key.
func (s *Store) emptyRange(start, end []byte) (bool, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return false, err
	}
	defer it.Close()
	return !it.First(), it.Error()
}

// LinkedSizes sums the sizes of the sstables in a snapshot directory: total
// all of them, live those that are no longer the store's own files
// (table::get_snapshot_details: a file with one link, or not the same file
// as the data directory's of that name).
func (s *Store) LinkedSizes(dir string) (total, live int64) {
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if e.Name() == "manifest.json" || e.Name() == "schema.cql" {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		total += fi.Size()
		if own, err := os.Stat(filepath.Join(s.dir, e.Name())); err != nil || !os.SameFile(fi, own) {
			live += fi.Size()
		}
	}
	return total, live
}
