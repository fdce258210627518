package cql

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// DefaultTTLPeriod is db/config.cc alternator_ttl_period_in_seconds: how
// often the expiration service starts a scan (ScyllaDB's test runners set
// 0.5 s).
const DefaultTTLPeriod = 24 * time.Hour

// ExpirationStats are alternator/ttl.cc expiration_service::stats (the
// scylla_expiration_* metrics).
type ExpirationStats struct {
	ScanPasses, ScanTable, ItemsDeleted uint64
}

// ExpirationStats returns the expiration service's counters.
func (s *Server) ExpirationStats() ExpirationStats {
	return ExpirationStats{s.expPasses.Load(), s.expTables.Load(), s.expDeleted.Load()}
}

// RunExpiration is alternator/ttl.cc expiration_service::run for CQL's
// per-row TTL: a pass scans every table that has a TTL column, deletes
// the rows whose TTL column holds a time that has passed (at LOCAL_QUORUM,
// a row tombstone, or a partition tombstone for a table without
// clustering columns), then sleeps out the rest of the period. ScyllaDB
// spreads the token ranges over their primary replicas; here one node (the
// lowest host id among the normal nodes) scans them all, so a row is
// expired once. It returns when ctx ends.
func (s *Server) RunExpiration(ctx context.Context) {
	for {
		start := time.Now()
		if s.expirationScanner() {
			s.expirationPass(ctx)
		}
		s.expPasses.Add(1)
		wait := s.ttlPeriod() - time.Since(start)
		select {
		case <-ctx.Done():
			return
		case <-time.After(max(wait, 0)):
		}
	}
}

func (s *Server) ttlPeriod() time.Duration {
	if s.opts.TTLPeriod > 0 {
		return s.opts.TTLPeriod
	}
	return DefaultTTLPeriod
}

// expirationScanner: this node scans for the cluster (see RunExpiration).
func (s *Server) expirationScanner() bool {
	me := s.b.Local()
	for _, p := range s.b.Peers() {
		if p.State == engine.StateNormal && bytes.Compare(p.HostID[:], me.HostID[:]) < 0 {
			return false
		}
	}
	return true
}

func (s *Server) expirationPass(ctx context.Context) {
	for _, tables := range s.b.Schema().Tables {
		for _, t := range tables {
			col := ttlColumn(t)
			if col == "" || ctx.Err() != nil {
				continue
			}
			s.expTables.Add(1)
			if err := s.expireTable(ctx, t, col); err != nil && ctx.Err() == nil {
				s.logf("WARN", "table %s.%s expiration scan failed: %v", t.Keyspace, t.Name, err)
			}
		}
	}
}

// expireTable is ttl.cc scan_table_ranges over the whole ring, a page at a time.
func (s *Server) expireTable(ctx context.Context, t *engine.Table, col string) error {
	typ := ""
	hasCK := false
	for _, c := range t.Columns {
		if c.Name == col {
			typ = c.Type
		}
		hasCK = hasCK || c.Kind == engine.Clustering
	}
	r := engine.RangeRead{Keyspace: t.Keyspace, Table: t.Name, Start: math.MinInt64, End: math.MaxInt64, Limit: 1000}
	for {
		rows, err := s.b.ReadRange(ctx, r, engine.LocalQuorum)
		if err != nil {
			return err
		}
		now := time.Now()
		for _, row := range rows {
			if !rowExpired(typ, row.Cells[col], now) {
				continue
			}
			m := engine.Mutation{Keyspace: t.Keyspace, Table: t.Name, PartitionKey: row.PartitionKey, Delete: true, Timestamp: now.UnixMicro()}
			if hasCK {
				m.Clustering = row.Clustering
			}
			if err := s.b.Write(ctx, []engine.Mutation{m}, engine.LocalQuorum); err != nil {
				return err
			}
			s.expDeleted.Add(1)
		}
		if len(rows) < r.Limit {
			return nil
		}
		last := rows[len(rows)-1]
		r.After = &last
	}
}

// rowExpired is ttl.cc is_expired: the expiration time (timestamp:
// milliseconds; bigint and int: seconds since the epoch) has come, and is
// not more than 5 years in the past (then it is taken as malformed).
func rowExpired(typ string, v []byte, now time.Time) bool {
	var at time.Time
	switch {
	case typ == "timestamp" && len(v) == 8:
		at = time.UnixMilli(int64(binary.BigEndian.Uint64(v)))
	case typ == "bigint" && len(v) == 8:
		at = time.Unix(int64(binary.BigEndian.Uint64(v)), 0)
	case typ == "int" && len(v) == 4:
		at = time.Unix(int64(int32(binary.BigEndian.Uint32(v))), 0)
	default:
		return false
	}
	return !at.After(now) && at.After(now.AddDate(-5, 0, 0))
}

// ttlPeriodJSON is the option's value as system.config shows it.
func (s *Server) ttlPeriodJSON() string {
	return strconv.FormatFloat(s.ttlPeriod().Seconds(), 'f', -1, 64)
}
