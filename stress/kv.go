package stress

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/gocql/gocql"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress/cqlarg"
	"github.com/elasticity-dev/elasticity/stress/keygen"
	"github.com/elasticity-dev/elasticity/stress/sched"
)

// KVSpec is the built-in key/value model's spec, the job's default --model.
const KVSpec = "kv"

// KV is the built-in model: one table `key bigint PRIMARY KEY, value
// blob`, a write:read mix, every key's value keygen's value for the key
// (so data validation regenerates it). Its spec is just "kv": its settings
// are the job's own flags (--keyspace, --table, --value-size, --mix,
// --cl-write, --cl-read), which Job.ResolveModel puts in.
type KV struct {
	Keyspace, Table       string
	ValueMin, ValueMax    int // bytes; both 0: 1 KiB
	WriteCL, ReadCL       gocql.Consistency
	WriteRatio, ReadRatio float64
}

func init() {
	RegisterModel(KVSpec, func(text string) (Model, error) {
		if text != "" {
			return nil, fmt.Errorf("the built-in model takes no text (%q): its settings are the job's flags", text)
		}
		return DefaultKV(), nil
	})
}

// DefaultKV is the built-in model with DefaultJob's settings.
func DefaultKV() KV {
	j := DefaultJob()
	return KV{Keyspace: j.Keyspace, Table: j.Table, ValueMin: j.ValueMin, ValueMax: j.ValueMax,
		WriteCL: gocql.Quorum, ReadCL: gocql.Quorum, WriteRatio: j.WriteRatio, ReadRatio: j.ReadRatio}
}

// normalised checks k and fills its defaults.
func (k KV) normalised() (KV, error) {
	if err := errors.Join(checkIdent("keyspace", k.Keyspace), checkIdent("table", k.Table)); err != nil {
		return k, err
	}
	if k.WriteRatio < 0 || k.ReadRatio < 0 || k.WriteRatio+k.ReadRatio <= 0 ||
		math.IsNaN(k.WriteRatio+k.ReadRatio) || math.IsInf(k.WriteRatio+k.ReadRatio, 0) {
		return k, fmt.Errorf("workload mix write=%v,read=%v: ratios must be non-negative and not both zero", k.WriteRatio, k.ReadRatio)
	}
	if k.ValueMin == 0 && k.ValueMax == 0 {
		k.ValueMin, k.ValueMax = 1024, 1024
	}
	if k.ValueMax == 0 {
		k.ValueMax = k.ValueMin
	}
	if k.WriteCL == 0 {
		k.WriteCL = gocql.Quorum
	}
	if k.ReadCL == 0 {
		k.ReadCL = gocql.Quorum
	}
	return k, nil
}

// Spec implements Model.
func (KV) Spec() string { return KVSpec }

// Describe implements Model.
func (k KV) Describe() ModelInfo {
	size := fmt.Sprintf("%d B", k.ValueMin)
	if k.ValueMax > k.ValueMin {
		size = fmt.Sprintf("%d..%d B", k.ValueMin, k.ValueMax)
	}
	return ModelInfo{Kind: "key/value", Keyspace: k.Keyspace, Table: k.Table, Ops: k.Ops(), KeyUnit: UnitRow,
		Notes: []string{"values of " + size + ", each key's own (data validation regenerates them)"}}
}

// Schema implements Model: the keyspace and the key/value table.
func (k KV) Schema(t SchemaTarget) ([]string, error) {
	return Schema{Keyspace: k.Keyspace, Table: k.Table, RF: t.RF, DC: t.DC, Tablets: t.Tablets}.Statements()
}

// Operation type indexes of the built-in model (its Ops order).
const (
	opWrite = 0
	opRead  = 1
)

// Ops implements Model: write and read, in that order.
func (k KV) Ops() []OpSpec {
	return []OpSpec{
		{Name: results.OpWrite, Class: results.OpWrite, Weight: k.WriteRatio, CL: k.WriteCL},
		{Name: results.OpRead, Class: results.OpRead, Weight: k.ReadRatio, CL: k.ReadCL},
	}
}

// KeyBytes implements Sizer: the mean value size (the key's 8 bytes are
// not counted: the plan's estimate of value_size bytes a key predates Sizer).
func (k KV) KeyBytes() float64 {
	if k.ValueMin == 0 && k.ValueMax == 0 {
		return 1024
	}
	return (float64(k.ValueMin) + float64(max(k.ValueMin, k.ValueMax))) / 2
}

// KeyWrites implements Sizer: one INSERT a key.
func (KV) KeyWrites() float64 { return 1 }

// Regenerable implements Model: a key's value is keygen's for the key.
func (KV) Regenerable() bool { return true }

// Bind implements Model (the mix of writes and reads).
func (k KV) Bind(_ context.Context, s *gocql.Session, b Binding) (sched.Op, error) {
	op, _, err := k.bindCounting(s, b)
	return op, err
}

// bindCounting is Bind that also counts the reads that found no row.
func (k KV) bindCounting(s *gocql.Session, b Binding) (sched.Op, *atomic.Int64, error) {
	k, err := k.normalised()
	if err != nil {
		return nil, nil, err
	}
	if b.Keys < 0 {
		return nil, nil, fmt.Errorf("workload key count %d is negative", b.Keys)
	}
	keys, err := NewKeyPicker(b)
	if err != nil {
		return nil, nil, err
	}
	vals, err := keygen.NewValues(k.ValueMin, k.ValueMax)
	if err != nil {
		return nil, nil, err
	}
	qp := &queryPool{s: s, insert: k.insertCQL(), sel: fmt.Sprintf("SELECT value FROM %s.%s WHERE key = ?", k.Keyspace, k.Table),
		wcl: k.WriteCL, rcl: k.ReadCL}
	misses := new(atomic.Int64)
	op := func(ctx context.Context, typ int, seq uint64) error {
		st := qp.get(ctx)
		defer qp.pool.Put(st)
		if typ == opWrite {
			key := keys.WriteKey(seq)
			st.key.V, st.val.B = key, vals.ForKey(key) // the key's own value: overwrites keep it valid
			err := st.write.Exec()
			if err == nil && keys.Adds() {
				keys.Added(1)
			}
			return err
		}
		st.key.V = keys.ReadKey(seq)
		err := st.read.Scan(&cqlarg.DiscardValue)
		if errors.Is(err, gocql.ErrNotFound) {
			misses.Add(1)
			return nil
		}
		return err
	}
	return op, misses, nil
}

func (k KV) insertCQL() string {
	return fmt.Sprintf("INSERT INTO %s.%s (key, value) VALUES (?, ?)", k.Keyspace, k.Table)
}

// Fill implements Model: key b.StartKey + seq·b.Stride with its own value,
// at the write consistency level.
func (k KV) Fill(_ context.Context, s *gocql.Session, b Binding) (sched.Op, error) {
	k, err := k.normalised()
	if err != nil {
		return nil, err
	}
	vals, err := keygen.NewValues(k.ValueMin, k.ValueMax)
	if err != nil {
		return nil, err
	}
	qp := &queryPool{s: s, insert: k.insertCQL(), wcl: k.WriteCL}
	start, stride := b.StartKey, max(b.Stride, 1)
	op := func(ctx context.Context, _ int, seq uint64) error {
		st := qp.get(ctx)
		defer qp.pool.Put(st)
		key := start + int64(seq)*stride
		st.key.V, st.val.B = key, vals.ForKey(key)
		err := st.write.Exec()
		if err != nil && b.Failed != nil {
			b.Failed(key)
		}
		return err
	}
	return op, nil
}
