package run

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/plan"

	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
)

// Validator is a Load that can read back what its fills wrote.
type Validator interface {
	// Validate checks the written keys as the plan's validate section asks;
	// replicas names the nodes owning a partition key, given in nodetool
	// style as the model's stress.Validator says it (nil: not reported by node).
	Validate(ctx context.Context, after string, replicas func(ctx context.Context, partitionKey string) ([]string, error)) (results.Validation, error)
}

// unacked is the set of keys whose fill write failed.
type unacked struct {
	mu   sync.Mutex
	keys map[int64]bool
}

func (u *unacked) add(k int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.keys == nil {
		u.keys = map[int64]bool{}
	}
	u.keys[k] = true
}

func (u *unacked) has(k int64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.keys[k]
}

// Validate runs the plan's data validation from the runner's own session.
func (l *stressLoad) Validate(ctx context.Context, after string, replicas func(ctx context.Context, partitionKey string) ([]string, error)) (results.Validation, error) {
	v, d := l.p.Validate, l.p.Data
	cl, err := stress.ParseCL("validate.consistency", v.Consistency)
	if err != nil {
		return results.Validation{}, err
	}
	m, err := baseJob(l.p, nil, 0).ResolveModel()
	if err != nil {
		return results.Validation{}, err
	}
	var rows stress.Validator // nil: the built-in table
	if _, kv := m.(stress.KV); !kv {
		rows, _ = m.(stress.Validator)
	}
	return stress.Validate(ctx, l.s, stress.Check{
		Keyspace: d.Keyspace, Table: d.Table, Keys: l.keys.Load(), ValueMin: d.ValueMin, ValueMax: d.ValueMax, Rows: rows,
		Unacked: l.failed.has, Sample: v.Sample, Ranges: v.TokenRanges, CL: cl, Replicas: replicas, After: after,
	})
}

// Replicas names the nodes that own a partition key (nodetool style: a
// bigint in decimal, a blob in hex) of the run's table.
func (lc *liveCluster) Replicas(ctx context.Context, keyspace, table, partitionKey string) ([]string, error) {
	return lc.c.Replicas(ctx, keyspace, table, partitionKey)
}

// validateData reads back the fills' keys after a step or at the end
// ("final"), records the outcome and logs it; the verdict is the report's.
func (r *run) validateData(ctx context.Context, after string) error {
	val, ok := r.load.(Validator)
	if !ok || !r.p.Validate.Enabled() || len(r.p.Fill) == 0 {
		return nil
	}
	var replicas func(context.Context, string) ([]string, error)
	if rc, ok := r.cluster.(interface {
		Replicas(ctx context.Context, keyspace, table, partitionKey string) ([]string, error)
	}); ok {
		replicas = func(ctx context.Context, pk string) ([]string, error) {
			return rc.Replicas(ctx, r.p.Data.Keyspace, r.p.Data.Table, pk)
		}
	}
	if why := validationNotDone(r.p); why != "" {
		v := results.Validation{Time: time.Now(), After: after, Consistency: r.p.Validate.Consistency, NotDone: why, Unit: r.p.Workload.Model.Unit()}
		r.emit(results.Event{Type: results.EventValidation, Phase: results.PhaseValidate, Step: stepOf(after), Validation: &v,
			Message: "data validation: not done: " + why})
		r.rep.Logf("data validation after %s: not done: %s", after, why)
		return nil
	}
	r.rep.Progress(results.PhaseValidate, fmt.Sprintf("reading back the written keys at %s (after %s)", r.p.Validate.Consistency, after))
	v, err := val.Validate(ctx, after, replicas)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return fmt.Errorf("validating the data: %w", err)
	}
	v.Unit = r.p.Workload.Model.Unit()
	r.emit(results.Event{Type: results.EventValidation, Phase: results.PhaseValidate, Step: stepOf(after), Validation: &v,
		Message: validationSummary(&v)})
	r.rep.Logf("data validation after %s: %s", after, validationSummary(&v))
	return nil
}

func stepOf(after string) string {
	if after == results.ValidationFinal {
		return ""
	}
	return after
}

// validationSummary is the one-line outcome of a validation, its keys
// counted in the model's unit (rows, or partitions of rows).
func validationSummary(v *results.Validation) string {
	u := v.KeyUnit()
	s := fmt.Sprintf("%d missing, %d mismatched of %d %ss (%d read one by one, %d of %d token ranges scanned: %d %ss) at %s in %.1f s",
		v.Missing, v.Mismatched, v.Keys, u, v.SampleKeys, v.ScannedRanges, results.RingParts, v.ScannedRows, u, v.Consistency, v.DurationS)
	if v.ReadErrors > 0 {
		s += fmt.Sprintf("; %d reads failed (%s)", v.ReadErrors, v.Error)
	}
	return s
}

// validationNotDone says why the plan's workload model cannot be validated
// ("" when it can): plan.ValidationNotDone, as the plan printed it.
func validationNotDone(p *plan.Plan) string {
	mp := p.Workload.Model
	if mp.IsBuiltin() {
		return ""
	}
	m, err := stress.ParseModel(p.Load.ModelSpec)
	if err != nil {
		return fmt.Sprintf("the workload model does not parse: %v", err)
	}
	return plan.ValidationNotDone(m, mp)
}
