package engine

import (
	"encoding/json"
	"testing"
)

// A table saved with Dropped as bare names (before drops recorded type
// and timestamp) still loads; one saved now round-trips.
func TestDroppedColumnJSON(t *testing.T) {
	var old Table
	if err := json.Unmarshal([]byte(`{"Name":"t","Dropped":["a","b"]}`), &old); err != nil {
		t.Fatal(err)
	}
	if len(old.Dropped) != 2 || old.Dropped[1] != (DroppedColumn{Name: "b"}) {
		t.Errorf("old form: %+v", old.Dropped)
	}
	in := Table{Name: "t", Dropped: []DroppedColumn{{Name: "a", Type: "int", Timestamp: 20000}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Table
	if err := json.Unmarshal(b, &out); err != nil || len(out.Dropped) != 1 || out.Dropped[0] != in.Dropped[0] {
		t.Errorf("round trip of %s: %+v %v", b, out.Dropped, err)
	}
	if ts, ok := out.DroppedAt("a"); !ok || ts != 20000 {
		t.Errorf("DroppedAt(a) = %d %v", ts, ok)
	}
}
