package sbench

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/stress"
)

// Token implements stress.Validator: key k is partition pk partition-offset+k.
func (m *Model) Token(key int64) int64 { return stress.KeyToken(m.o.PartitionOffset + key) }

// PartitionKey implements stress.Validator: pk partition-offset+k in decimal.
func (m *Model) PartitionKey(key int64) string {
	return strconv.FormatInt(m.o.PartitionOffset+key, 10)
}

// CheckKey implements stress.Validator: it reads key's partition and
// checks it holds every clustering row, each as its pk and ck regenerate
// it (counters: as every update keeps them, modes.go).
func (m *Model) CheckKey(ctx context.Context, s *gocql.Session, cl gocql.Consistency, key int64) (stress.RowState, error) {
	pk := m.o.PartitionOffset + key
	q := fmt.Sprintf("SELECT %s FROM %s.%s WHERE pk = ?", m.fields(), m.o.Keyspace, m.table())
	pc := m.newPartitionCheck()
	err := m.scanRows(s.Query(q, pk).WithContext(ctx).Consistency(cl).PageSize(m.o.PageSize).Iter(), pc.row)
	if err != nil {
		return stress.RowsOK, err
	}
	if pc.rows == 0 {
		return stress.RowsMissing, nil
	}
	return pc.state(), nil
}

// ScanRange implements stress.Validator: it reads tokens first..last and
// reports each partition found (rows come partition by partition).
func (m *Model) ScanRange(ctx context.Context, s *gocql.Session, cl gocql.Consistency, first, last int64, found func(int64, stress.RowState)) error {
	q := fmt.Sprintf("SELECT %s FROM %s.%s WHERE token(pk) >= ? AND token(pk) <= ?", m.fields(), m.o.Keyspace, m.table())
	pc := m.newPartitionCheck()
	cur, seen := int64(0), false
	err := m.scanRows(s.Query(q, first, last).WithContext(ctx).Consistency(cl).PageSize(m.o.PageSize).Iter(), func(pk, ck int64, v []byte, c *[5]int64) {
		if seen && pk != cur {
			found(cur-m.o.PartitionOffset, pc.state())
			pc.reset()
		}
		cur, seen = pk, true
		pc.row(pk, ck, v, c)
	})
	if err != nil {
		return err
	}
	if seen {
		found(cur-m.o.PartitionOffset, pc.state())
	}
	return nil
}

// scanRows calls row for every row of it: v for the table, c for counters.
func (m *Model) scanRows(it *gocql.Iter, row func(pk, ck int64, v []byte, c *[5]int64)) error {
	var pk, ck int64
	if m.counters() {
		var c [5]int64
		for it.Scan(&pk, &ck, &c[0], &c[1], &c[2], &c[3], &c[4]) {
			row(pk, ck, nil, &c)
		}
	} else {
		var v blobDest
		for it.Scan(&pk, &ck, &v) {
			row(pk, ck, v.b, nil)
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("reading back %s.%s: %w", m.o.Keyspace, m.table(), err)
	}
	return nil
}

// partitionCheck counts one partition's rows and whether each is right.
type partitionCheck struct {
	m           *Model
	rows, right int64
	want        []byte
}

func (m *Model) newPartitionCheck() *partitionCheck { return &partitionCheck{m: m} }

func (p *partitionCheck) reset() { p.rows, p.right = 0, 0 }

func (p *partitionCheck) row(pk, ck int64, v []byte, c *[5]int64) {
	m := p.m
	if ck < 0 || ck >= m.o.ClusteringRowCount {
		return // not a row the model writes
	}
	p.rows++
	if c != nil {
		if validateCounters(ck, c) == nil {
			p.right++
		}
		return
	}
	want := grow(&p.want, m.size.forRow(pk, ck))
	generateData(want, pk, ck, m.o.ValidateData, m.o.NoRandomData)
	if bytes.Equal(v, want) {
		p.right++
	}
}

// state is the partition's: right when every row is there and right.
func (p *partitionCheck) state() stress.RowState {
	if p.rows == p.m.o.ClusteringRowCount && p.right == p.rows {
		return stress.RowsOK
	}
	return stress.RowsWrong
}
