package cql

import (
	"crypto/md5"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/elasticity-dev/elasticity/emulator/cql/cqlparse"
)

// prepared is a statement kept for EXECUTE.
type prepared struct {
	id       []byte
	query    string
	keyspace string // session keyspace at PREPARE time
	stmt     cqlparse.Statement
	nbinds   int
	vars     *message.VariablesMetadata
	result   *message.RowsMetadata
	// sig is a SELECT's table's columnsSig at PREPARE: an ALTER TABLE
	// since then makes EXECUTE answer UNPREPARED, as ScyllaDB drops a
	// table's prepared statements when its schema changes
	// (cql3/query_processor.cc prepared statements invalidation).
	sig uint64
	// inline: an EXECUTE of it may be served on the connection's reading
	// goroutine (servedInline).
	inline bool
}

// servedInline: statements whose waits the backend reports (a single
// statement's replica writes and reads, engine.WillWait), not conditional
// ones (Paxos rounds) nor batches, DDL or the rest, which are rarer and
// wait in ways it does not report.
func servedInline(st cqlparse.Statement) bool {
	switch st.(type) {
	case *cqlparse.Select, *cqlparse.Insert, *cqlparse.Update, *cqlparse.Delete:
		return !conditional(st)
	}
	return false
}

// preparedCache maps statement ids to prepared statements, bounded so a
// client preparing endless distinct strings cannot exhaust memory.
type preparedCache struct {
	mu  sync.RWMutex
	max int
	m   map[[16]byte]*prepared
}

func newPreparedCache(max int) *preparedCache {
	return &preparedCache{max: max, m: map[[16]byte]*prepared{}}
}

func preparedID(keyspace, query string) [16]byte {
	return md5.Sum([]byte(keyspace + "\x00" + query))
}

func (c *preparedCache) get(id []byte) *prepared {
	if len(id) != 16 {
		return nil
	}
	var k [16]byte
	copy(k[:], id)
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[k]
}

func (c *preparedCache) put(k [16]byte, p *prepared) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		for old := range c.m { // evict an arbitrary entry
			delete(c.m, old)
			break
		}
	}
	c.m[k] = p
}

func (c *preparedCache) reset() {
	c.mu.Lock()
	c.m = map[[16]byte]*prepared{}
	c.mu.Unlock()
}

// ResetPrepared forgets all prepared statements, as a restarted node would;
// clients then get Unprepared and re-prepare.
func (s *Server) ResetPrepared() { s.prepared.reset() }

// drop forgets one prepared statement.
func (c *preparedCache) drop(id []byte) {
	if len(id) != 16 {
		return
	}
	c.mu.Lock()
	delete(c.m, [16]byte(id))
	c.mu.Unlock()
}
