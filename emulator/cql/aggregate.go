package cql

import (
	"encoding/binary"
	"math"
	"math/big"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// The native aggregates of cql3/functions/aggregate_fcts.cc over one
// column: count, min and max of any type, sum and avg of the numeric
// types. A query with one folds its rows into a single row; its other
// selectors take their first row's values, as ScyllaDB's do.
var aggregateFuncs = map[string]bool{"sum": true, "avg": true, "min": true, "max": true, "count": true}

// maxDecimalRescale bounds the scale difference of two decimals the
// emulator adds: aligning 1e500000000 and 1 needs a number of half a
// billion digits, which hangs or exhausts ScyllaDB (SCYLLADB-1576,
// test/cqlpy test_type_decimal.py test_decimal_sum_extreme_scale_oom);
// the emulator refuses instead.
const maxDecimalRescale = 100000

// aggregateType is the result type of fn over a column of type dt
// (aggregate_fcts.cc: count is a bigint, the others are of the argument's
// type; a counter sums as a bigint).
func aggregateType(fn string, dt datatype.DataType) (datatype.DataType, error) {
	switch fn {
	case "count":
		return datatype.Bigint, nil
	case "min", "max":
		return dt, nil
	}
	switch dt {
	case datatype.Tinyint, datatype.Smallint, datatype.Int, datatype.Bigint, datatype.Float,
		datatype.Double, datatype.Decimal, datatype.Varint:
		return dt, nil
	case datatype.Counter:
		return datatype.Bigint, nil
	}
	// cql3/functions/functions.cc get: no overload takes this type.
	return nil, engine.Errorf(engine.CodeInvalid, "Invalid call to function %s, none of its type signatures match (type %s)", fn, typeName(dt))
}

// aggregate folds rows into one: the first row's values (or nulls when
// there is none) with each aggregate's slot replaced by its result.
func (p *projection) aggregate(ti *tableInfo, rows [][][]byte) ([][]byte, error) {
	out := make([][]byte, len(ti.all)+len(p.attrs))
	if len(rows) > 0 {
		copy(out, rows[0])
	}
	for k, a := range p.attrs {
		if a.udf != nil && a.udf.f.Aggregate {
			v, err := p.foldUDA(a.udf, rows)
			if err != nil {
				return nil, err
			}
			out[len(ti.all)+k] = v
			continue
		}
		if !aggregateFuncs[a.fn] || a.udf != nil || a.col == nil {
			continue
		}
		slot := len(ti.all) + k
		vals := make([][]byte, 0, len(rows))
		for _, r := range rows {
			if r[slot] != nil {
				vals = append(vals, r[slot])
			}
		}
		v, err := foldAggregate(a.fn, a.col.dt, vals)
		if err != nil {
			return nil, err
		}
		out[slot] = v
	}
	return out, nil
}

// foldAggregate is fn over the non-null values of a column of type dt.
func foldAggregate(fn string, dt datatype.DataType, vals [][]byte) ([]byte, error) {
	switch fn {
	case "count":
		return binary.BigEndian.AppendUint64(nil, uint64(len(vals))), nil
	case "min", "max":
		var best []byte
		for _, v := range vals {
			c, _ := compareEncoded(dt, v, best)
			if best == nil || (fn == "min" && c < 0) || (fn == "max" && c > 0) {
				best = v
			}
		}
		return best, nil
	}
	switch dt {
	case datatype.Float, datatype.Double:
		return floatAggregate(fn, dt, vals), nil
	case datatype.Decimal:
		return decimalAggregate(fn, vals)
	}
	return integerAggregate(fn, dt, vals)
}

// integerAggregate sums integers in an unbounded accumulator
// (accumulator_for: utils::multiprecision_int); sum narrows the result to
// the column's type or fails as narrow() does, avg divides truncating.
func integerAggregate(fn string, dt datatype.DataType, vals [][]byte) ([]byte, error) {
	acc := new(big.Int)
	for _, v := range vals {
		acc.Add(acc, varintValue(v))
	}
	if fn == "avg" && len(vals) > 0 {
		acc.Quo(acc, big.NewInt(int64(len(vals))))
	}
	if dt == datatype.Varint {
		return varintBytes(acc), nil
	}
	size := map[datatype.DataType]int{datatype.Tinyint: 1, datatype.Smallint: 2, datatype.Int: 4}[dt]
	if size == 0 {
		size = 8 // bigint, counter
	}
	lim := new(big.Int).Lsh(big.NewInt(1), uint(8*size-1))
	if acc.Cmp(lim) >= 0 || acc.Cmp(new(big.Int).Neg(lim)) < 0 {
		// exceptions.hh overflow_error_exception is an invalid request.
		return nil, engine.Errorf(engine.CodeInvalid, "Sum overflow. Values should be casted to a wider type.")
	}
	b := binary.BigEndian.AppendUint64(nil, uint64(acc.Int64()))
	return b[8-size:], nil
}

// floatAggregate accumulates in the column's own type (accumulator_for of
// a floating type is the type itself).
func floatAggregate(fn string, dt datatype.DataType, vals [][]byte) []byte {
	var sum float64
	var sum32 float32
	for _, v := range vals {
		if dt == datatype.Float {
			sum32 += math.Float32frombits(binary.BigEndian.Uint32(v))
		} else {
			sum += math.Float64frombits(binary.BigEndian.Uint64(v))
		}
	}
	if fn == "avg" && len(vals) > 0 {
		sum32 /= float32(len(vals))
		sum /= float64(len(vals))
	}
	if dt == datatype.Float {
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(sum32))
	}
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(sum))
}

// decimalAggregate adds decimals as utils/big_decimal.cc operator+= does
// (at the larger scale); avg divides the sum by the count at the sum's
// scale with HALF_EVEN rounding (big_decimal::div).
func decimalAggregate(fn string, vals [][]byte) ([]byte, error) {
	sum, scale := new(big.Int), int64(0)
	for _, v := range vals {
		u, s, err := decimalParts(v)
		if err != nil {
			return nil, engine.Errorf(engine.CodeInvalid, "%s: %v", fn, err)
		}
		if d := s - scale; d > maxDecimalRescale || d < -maxDecimalRescale {
			return nil, engine.Errorf(engine.CodeInvalid, "%s of decimals whose scales differ by %d digits is refused by the emulator (ScyllaDB runs out of memory: SCYLLADB-1576)", fn, d)
		}
		switch {
		case s > scale:
			sum.Mul(sum, pow10(s-scale))
			scale = s
		case s < scale:
			u = new(big.Int).Mul(u, pow10(scale-s))
		}
		sum.Add(sum, u)
	}
	if fn == "avg" && len(vals) > 0 {
		sum = divHalfEven(sum, int64(len(vals)))
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(int32(scale)))
	return append(b, varintBytes(sum)...), nil
}

func pow10(n int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil) }

// divHalfEven is x/y rounded half to even (big_decimal.cc div).
func divHalfEven(x *big.Int, y int64) *big.Int {
	a := new(big.Int).Abs(x)
	q, r := new(big.Int).QuoRem(a, big.NewInt(y), new(big.Int))
	twice := new(big.Int).Lsh(r, 1)
	if c := twice.Cmp(big.NewInt(y)); c > 0 || (c == 0 && q.Bit(0) == 1) {
		q.Add(q, big.NewInt(1))
	}
	if x.Sign() < 0 {
		q.Neg(q)
	}
	return q
}
