package node

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
)

// A killed node's store keeps what it had written and writes nothing more,
// and the node started again in the same process opens it: its lock was
// the killed node's. What a killed process had written is what reached
// the OS: a synced write; an unsynced one still in Pebble's WAL buffer is
// lost, as SIGKILL loses it, and a flush after the kill never writes it.
// While the node runs, a second open in this process is refused.
func TestKilledStoreKeepsItsWritesAndReopens(t *testing.T) {
	dir := t.TempDir()
	life := NewLife()
	st, err := openStore(dir, 64<<20, rowCacheSize(64<<20), life)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.db.Set(append([]byte{prefixMeta}, "before"...), []byte("kept"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := st.PutMeta("buffered", []byte("lost")); err != nil {
		t.Fatal(err)
	}
	if _, err := openStore(dir, 64<<20, rowCacheSize(64<<20), NewLife()); err == nil {
		t.Fatal("a second node opened the store of a running one")
	}
	life.Kill()
	flushed := make(chan error, 1)
	go func() { flushed <- st.Flush() }()
	select {
	case err := <-flushed:
		t.Fatalf("a killed node's flush returned (%v): it must never reach its files", err)
	case <-time.After(300 * time.Millisecond):
	}

	again, err := openStore(dir, 64<<20, rowCacheSize(64<<20), NewLife())
	if err != nil {
		t.Fatalf("the node started again cannot open its store: %v", err)
	}
	defer again.Close()
	v, err := again.GetMeta("before")
	if err != nil || string(v) != "kept" {
		t.Fatalf("a synced write made before the kill: %q, %v", v, err)
	}
	if v, err := again.GetMeta("buffered"); err != nil || v != nil {
		t.Fatalf("an unsynced write of a killed node reached its files after the kill: %q, %v", v, err)
	}
}

// Paused, a node's writes wait; resumed, they go on.
func TestPausedStoreWaits(t *testing.T) {
	life := NewLife()
	st, err := openStore(t.TempDir(), 64<<20, rowCacheSize(64<<20), life)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.PutMeta("k", []byte("v"))
	life.Pause()
	flushed := make(chan error, 1)
	go func() { flushed <- st.Flush() }()
	select {
	case err := <-flushed:
		t.Fatalf("a paused node's flush returned (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	life.Resume()
	select {
	case err := <-flushed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a resumed node's flush did not finish")
	}
}
