package node

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// nodetool flush (POST /storage_service/flush) writes every memtable to
// sstables and logs it, as scylladb api/storage_service.cc force_flush does
// (apilog.info("flush all tables"), database::flush_all_tables).
func TestFlushWritesMemtables(t *testing.T) {
	var log syncBuf
	a := startMember(t, "127.0.9.1", &log, nil)
	createTable(t, a, 50)
	before := a.store.db.Metrics()
	if before.MemTable.Size == 0 {
		t.Fatal("no memtable data before the flush")
	}
	srv := httptest.NewServer(a.RESTHandler(nil))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/storage_service/flush", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("flush: %s", resp.Status)
	}
	after := a.store.db.Metrics()
	if after.Flush.Count <= before.Flush.Count || after.Levels[0].NumFiles+after.Levels[6].NumFiles == 0 {
		t.Fatalf("no flush: %d → %d flushes, L0 %d files", before.Flush.Count, after.Flush.Count, after.Levels[0].NumFiles)
	}
	if !strings.Contains(log.String(), "api - flush all tables") {
		t.Errorf("no flush line in the log:\n%s", log.String())
	}
}
