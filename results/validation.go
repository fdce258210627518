package results

import "time"

// ValidationFinal is the After of the validation that ends a run.
const ValidationFinal = "final"

// RingParts is the number of equal token ranges a data validation cuts the
// Murmur3 ring into: the ranges it scans and reports losses by.
const RingParts = 32

// Validation is one data validation: keys the run wrote, read back one by
// one (a sample, or all) and by scanning token ranges end to end, at one
// consistency level. A key is lost when it is missing or holds another
// value than the one written; keys whose fill write failed are not counted
// (the client was told they might not be stored).
type Validation struct {
	Time        time.Time `json:"time"`
	After       string    `json:"after"` // "final" or the nemesis step it followed
	Consistency string    `json:"consistency"`
	// Keys were written (0..Keys-1); Unacked of them had a failed write.
	Keys    int64 `json:"keys"`
	Unacked int64 `json:"unacknowledged_writes"`
	// SampleKeys were read one by one, ScannedRanges of RingParts scanned
	// (ScannedRows rows came back, ScanExpected were expected).
	SampleKeys    int64 `json:"sample_keys"`
	ScannedRanges int   `json:"scanned_ranges"`
	ScanExpected  int64 `json:"scan_expected_rows"`
	ScannedRows   int64 `json:"scanned_rows"`
	// Missing and Mismatched count distinct keys (sample and scans together).
	Missing    int64 `json:"missing"`
	Mismatched int64 `json:"mismatched"`
	// ReadErrors are reads or range scans that failed after retries: what
	// they covered is not verified.
	ReadErrors int64  `json:"read_errors"`
	Error      string `json:"error,omitempty"` // the first such failure
	// Ranges are the scanned ranges and every range with a lost key.
	Ranges []RangeCheck `json:"ranges"`
	// Nodes count lost keys by replica (ReplicasLookedUp of the lost keys
	// had their replicas looked up).
	Nodes            []NodeLoss `json:"nodes,omitempty"`
	ReplicasLookedUp int        `json:"replicas_looked_up,omitempty"`
	// Examples are a few lost keys.
	Examples   []int64 `json:"examples,omitempty"`
	DurationS  float64 `json:"duration_seconds"`
	Incomplete bool    `json:"incomplete,omitempty"` // read errors left keys unverified
	// NotDone says why nothing was validated (a workload model whose rows
	// cannot be regenerated from their keys); the other figures are zero.
	NotDone string `json:"not_done,omitempty"`
	// Unit is what a key is ("row", "partition"; "" a row): a workload
	// model whose key is a partition counts keys and scanned keys in
	// partitions.
	Unit string `json:"unit,omitempty"`
}

// KeyUnit is v's Unit, "row" when it does not say.
func (v *Validation) KeyUnit() string {
	if v.Unit == "" {
		return "row"
	}
	return v.Unit
}

// Lost is the number of keys missing or wrong.
func (v *Validation) Lost() int64 { return v.Missing + v.Mismatched }

// RangeCheck is one token range (First..Last inclusive, part Index of RingParts).
type RangeCheck struct {
	Index      int   `json:"index"`
	First      int64 `json:"first_token"`
	Last       int64 `json:"last_token"`
	Scanned    bool  `json:"scanned"`
	Expected   int64 `json:"expected_rows,omitempty"` // scanned: rows that must be there
	Found      int64 `json:"found_rows,omitempty"`
	Missing    int64 `json:"missing"`
	Mismatched int64 `json:"mismatched"`
}

// NodeLoss is the number of lost keys a node is a replica of.
type NodeLoss struct {
	Node       string `json:"node"`
	Address    string `json:"address,omitempty"`
	Rack       string `json:"rack,omitempty"`
	Missing    int64  `json:"missing"`
	Mismatched int64  `json:"mismatched"`
}

// RingPart is part i of RingParts: tokens First..Last inclusive.
func RingPart(i int) (first, last int64) {
	const step = uint64(1<<64-1)/RingParts + 1 // 2^64 / RingParts
	first = int64(uint64(1<<63) + uint64(i)*step)
	return first, first + int64(step-1)
}

// RingPartOf is the part a token falls in.
func RingPartOf(token int64) int {
	const step = uint64(1<<64-1)/RingParts + 1
	return int((uint64(token) - uint64(1<<63)) / step)
}
