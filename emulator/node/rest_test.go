package node

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// restCall sends one request and returns the status and the decoded body
// (nil for an empty body).
func restCall(t *testing.T, srv *httptest.Server, method, path string) (int, any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s %s: body %q is not JSON: %v", method, path, b, err)
		}
	}
	return resp.StatusCode, v
}

// wantError checks a Seastar json_exception reply.
func wantError(t *testing.T, srv *httptest.Server, method, path string, status int, msg string) {
	t.Helper()
	code, v := restCall(t, srv, method, path)
	m, _ := v.(map[string]any)
	if code != status || m == nil || m["message"] != msg || m["code"] != float64(status) {
		t.Errorf("%s %s: %d %v, want %d {message: %q, code: %d}", method, path, code, v, status, msg, status)
	}
}

// restOK sends one request that must answer 200 and returns its body.
func restOK(t *testing.T, srv *httptest.Server, method, path string) any {
	t.Helper()
	code, v := restCall(t, srv, method, path)
	if code != 200 {
		t.Fatalf("%s %s: %d %v", method, path, code, v)
	}
	return v
}

// restServer serves n's REST API until the test ends.
func restServer(t *testing.T, n *Node) *httptest.Server {
	srv := httptest.NewServer(n.RESTHandler(nil))
	t.Cleanup(srv.Close)
	return srv
}

// restTableMember starts member 1 with ks.t (see createKeyspaceTable)
// and serves its REST API.
func restTableMember(t *testing.T, log *syncBuf, ks string, tablets bool, rows int) (*Node, *httptest.Server) {
	t.Helper()
	n := restMember(t, 1, log)
	createKeyspaceTable(t, n, ks, tablets, rows)
	return n, restServer(t, n)
}

// createKeyspaceTable makes ks.t (RF 1; tablets or vnodes) and writes rows.
func createKeyspaceTable(t *testing.T, n *Node, ks string, tablets bool, rows int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k := &engine.Keyspace{Name: ks, Replication: map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "1"},
		DurableWrites: true, TabletsEnabled: tablets}
	if _, err := n.ApplySchema(ctx, engine.SchemaChange{Kind: engine.CreateKeyspace, Keyspace: k}); err != nil {
		t.Fatal(err)
	}
	tb := &engine.Table{Keyspace: ks, Name: "t", Columns: []engine.Column{
		{Name: "k", Type: "text", Kind: engine.PartitionKey}, {Name: "v", Type: "blob", Kind: engine.Regular, Position: -1}}}
	if _, err := n.ApplySchema(ctx, engine.SchemaChange{Kind: engine.CreateTable, KeyspaceName: ks, Table: tb}); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		m := engine.Mutation{Keyspace: ks, Table: "t", PartitionKey: []byte(fmt.Sprintf("key-%d", i)),
			Cells: map[string][]byte{"v": make([]byte, 1024)}, Timestamp: time.Now().UnixMicro()}
		if err := n.Write(ctx, []engine.Mutation{m}, engine.All); err != nil {
			t.Fatal(err)
		}
	}
}

// localTokens are the tokens of the rows of ks.t in n's own store.
func localTokens(t *testing.T, n *Node, ks string) []int64 {
	t.Helper()
	tb := n.view.Load().m.Tables[ks]["t"]
	start := tableStart(tb.ID)
	kvs, _, err := n.store.Scan(start, keyUpperBound(start), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range kvs {
		out = append(out, int64(binary.BigEndian.Uint64(e.K[17:25])^(1<<63)))
	}
	return out
}

// Unknown paths, methods and missing parameters answer Seastar's JSON
// errors; a trailing '/' names the same route (seastar routes.cc
// routes::handle, normalize_url; handlers.hh verify_mandatory_params).
func TestRESTErrorsAreSeastarJSON(t *testing.T) {
	var log syncBuf
	a := restMember(t, 1, &log)
	srv := restServer(t, a)
	wantError(t, srv, "GET", "/storage_service/no_such_path", 404, "Not found")
	wantError(t, srv, "DELETE", "/storage_service/host_id", 404, "Not found")
	wantError(t, srv, "GET", "/storage_service/keyspace_scrub", 404, "Not found")
	wantError(t, srv, "POST", "/storage_service/compaction_throughput", 400, "Missing mandatory parameter 'value'")
	wantError(t, srv, "POST", "/storage_service/keyspace_flush/nosuch", 400, "Can't find a keyspace nosuch")
	for _, p := range []string{"/gossiper/endpoint/live", "/gossiper/endpoint/live/"} {
		if code, v := restCall(t, srv, "GET", p); code != 200 || fmt.Sprint(v) != "["+restNet+"1]" {
			t.Errorf("GET %s: %d %v", p, code, v)
		}
	}
}

// Per-keyspace operations check their keyspace and tables as
// parse_table_infos does, and the per-table switches read back
// (api/storage_service.cc, api/column_family.cc).
func TestRESTKeyspaceOperations(t *testing.T) {
	var log syncBuf
	_, srv := restTableMember(t, &log, "ks", true, 20)
	for _, op := range []string{"POST /storage_service/keyspace_flush/ks", "POST /storage_service/keyspace_compaction/ks?cf=t",
		"POST /storage_service/keyspace_cleanup/ks", "GET /storage_service/keyspace_scrub/ks?scrub_mode=VALIDATE&disable_snapshot=true",
		"DELETE /storage_service/auto_compaction/ks?cf=t", "POST /column_family/major_compaction/ks:t"} {
		method, path, _ := strings.Cut(op, " ")
		if code, v := restCall(t, srv, method, path); code != 200 {
			t.Errorf("%s: %d %v", op, code, v)
		}
	}
	wantError(t, srv, "POST", "/storage_service/keyspace_flush/ks?cf=t,nosuch", 400, "Can't find a column family nosuch in keyspace ks")
	wantError(t, srv, "GET", "/storage_service/keyspace_scrub/ks?scrub_mode=XXX", 400, "Unknown argument for 'scrub_mode' parameter: XXX")
	wantError(t, srv, "POST", "/column_family/autocompaction/ks.t", 400, "Column family name should be in keyspace:column_family format")
	if _, v := restCall(t, srv, "GET", "/column_family/autocompaction/ks:t"); v != false {
		t.Errorf("autocompaction after DELETE: %v, want false", v)
	}
	_, hist := restCall(t, srv, "GET", "/compaction_manager/compaction_history")
	if h, _ := hist.([]any); len(h) != 2 || h[0].(map[string]any)["compaction_type"] != "Major" || h[0].(map[string]any)["bytes_in"].(float64) <= 0 {
		t.Errorf("compaction history after two major compactions: %v", hist)
	}
	if !strings.Contains(log.String(), "Keyspace ks does not support cleanup") {
		t.Error("cleanup of a tablets keyspace did not say it is not needed")
	}
}

// describe_ring, range_to_endpoint_map and ownership of a one-node ring: it
// owns everything; a tablets keyspace needs its table named
// (api/storage_service.cc ensure_tablets_disabled).
func TestRESTRing(t *testing.T) {
	var log syncBuf
	a, srv := restTableMember(t, &log, "vn", false, 0)
	_, ring := restCall(t, srv, "GET", "/storage_service/describe_ring/vn")
	if r, _ := ring.([]any); len(r) != numVnodeTokens {
		t.Fatalf("describe_ring: %v, want %d ranges", ring, numVnodeTokens)
	}
	_, own := restCall(t, srv, "GET", "/storage_service/ownership/vn")
	if o, _ := own.([]any); len(o) != 1 || o[0].(map[string]any)["value"] != "1" {
		t.Errorf("ownership/vn: %v, want the one member owning 1", own)
	}
	_, own = restCall(t, srv, "GET", "/storage_service/ownership")
	var sum float64
	for _, e := range own.([]any) {
		f, _ := strconv.ParseFloat(e.(map[string]any)["value"].(string), 64)
		sum += f
	}
	if math.Abs(sum-1) > 1e-3 {
		t.Errorf("ownership: %v sums to %v", own, sum)
	}
	createKeyspaceTable(t, a, "tb", true, 0)
	wantError(t, srv, "GET", "/storage_service/range_to_endpoint_map/tb", 400,
		"storage_service/range_to_endpoint_map is per-table in keyspace 'tb'. Please provide table name using 'cf' parameter.")
	_, m := restCall(t, srv, "GET", "/storage_service/range_to_endpoint_map/tb?cf=t")
	if r, _ := m.([]any); len(r) == 0 || fmt.Sprint(r[0].(map[string]any)["value"]) != "["+restNet+"1]" {
		t.Errorf("range_to_endpoint_map/tb?cf=t: %v", m)
	}
	wantError(t, srv, "GET", "/storage_service/ownership", 400, "storage_service/ownership cannot be used when a keyspace uses tablets")
	_, eps := restCall(t, srv, "GET", "/storage_service/natural_endpoints/v2/tb?cf=t&key_component=x")
	if fmt.Sprint(eps) != "["+restNet+"1]" {
		t.Errorf("natural_endpoints/v2: %v", eps)
	}
}

// A snapshot hard-links the table's files: it costs nothing while they are
// live, and holds the data once the table lost it (total vs live,
// replica/table.cc get_snapshot_details); clearing removes it.
func TestRESTSnapshots(t *testing.T) {
	var log syncBuf
	a, srv := restTableMember(t, &log, "ks", true, 200)
	restOK(t, srv, "POST", "/storage_service/snapshots?tag=s1&kn=ks")
	wantError(t, srv, "POST", "/storage_service/snapshots?tag=s1&kn=ks", 500, "std::runtime_error (Keyspace ks: snapshot s1 already exists.)")
	sizes := func() (total, live float64) {
		_, v := restCall(t, srv, "GET", "/storage_service/snapshots")
		for _, s := range v.([]any) {
			if s.(map[string]any)["key"] == "s1" {
				e := s.(map[string]any)["value"].([]any)[0].(map[string]any)
				return e["total"].(float64), e["live"].(float64)
			}
		}
		t.Fatalf("snapshot s1 not listed: %v", v)
		return 0, 0
	}
	total, live := sizes()
	if total < 200*1024 || live != 0 {
		t.Fatalf("fresh snapshot: total %v live %v, want ≥ 200 KiB and 0", total, live)
	}
	a.disk.Refresh()
	used := a.disk.Used()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Truncate(ctx, "ks", "t"); err != nil {
		t.Fatal(err)
	}
	// Pebble deletes a compaction's obsolete files in the background.
	var total2, live2 float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if total2, live2 = sizes(); live2 >= total/2 {
			break
		}
	}
	if total2 != total || live2 < total/2 {
		t.Errorf("after truncate: total %v live %v, want %v and most of it live", total2, live2, total)
	}
	a.disk.Refresh()
	if a.disk.Used() < used/2 {
		t.Errorf("disk usage fell from %d to %d while the snapshot holds the data", used, a.disk.Used())
	}
	restOK(t, srv, "DELETE", "/storage_service/snapshots?tag=s1")
	if _, v := restCall(t, srv, "GET", "/storage_service/snapshots"); len(v.([]any)) != 0 {
		t.Errorf("snapshots after clear: %v", v)
	}
}

// A node joining a vnodes keyspace streams the rows of the ranges it takes
// over (dht/range_streamer.cc); cleanup then drops them from the old node,
// which keeps the rest (compaction/task_manager_module.cc
// cleanup_keyspace_compaction_task_impl): no row is lost.
func TestCleanupDropsUnownedVnodeRows(t *testing.T) {
	var log syncBuf
	a := restMember(t, 1, &log)
	createKeyspaceTable(t, a, "vn", false, 300)
	before := localTokens(t, a, "vn")
	b := restMember(t, 2, &log)
	deadline := time.Now().Add(20 * time.Second)
	for len(a.view.Load().ring) != 2*numVnodeTokens || a.view.Load().m.Nodes[a.hostID].State != engine.StateNormal {
		if time.Now().After(deadline) {
			t.Fatal("the second node never joined the ring")
		}
		time.Sleep(50 * time.Millisecond)
	}
	srv := restServer(t, a)
	if code, v := restCall(t, srv, "POST", "/storage_service/keyspace_cleanup/vn"); code != 200 || v != float64(0) {
		t.Fatalf("cleanup: %d %v", code, v)
	}
	v := a.view.Load()
	k := v.m.Keyspaces["vn"]
	owned := 0
	for _, tok := range before {
		if reps := vnodeReplicas(v.ring, k, tok, v.dcs); len(reps) == 1 && reps[0].Host == a.hostID {
			owned++
		}
	}
	after := localTokens(t, a, "vn")
	if owned == 0 || owned == len(before) || len(after) != owned {
		t.Fatalf("after cleanup %d of %d rows left, want the %d this node owns", len(after), len(before), owned)
	}
	for _, tok := range after {
		if reps := vnodeReplicas(v.ring, k, tok, v.dcs); reps[0].Host != a.hostID {
			t.Fatalf("row at token %d kept, owned by %s", tok, reps[0].Host)
		}
	}
	if streamed := localTokens(t, b, "vn"); len(streamed)+len(after) != len(before) {
		t.Errorf("the joined node holds %d rows and the old one %d of %d", len(streamed), len(after), len(before))
	}
	if !strings.Contains(log.String(), "[Cleanup vn.t] Cleaned 1 sstables to") {
		t.Error("no cleanup line in the log")
	}
}

// A keyspace's major compaction is a task tree in the compaction module
// (keyspace → shard → table, one sequence number), listed while its time
// to live lasts; the /tasks route answers the id of a task it runs in the
// background (api/task_manager.cc, api/tasks.cc, tasks/task_manager.cc).
func TestRESTCompactionTasks(t *testing.T) {
	var log syncBuf
	_, srv := restTableMember(t, &log, "ks", true, 20)
	restOK(t, srv, "POST", "/storage_service/keyspace_compaction/ks")
	if _, v := restCall(t, srv, "GET", "/task_manager/list_module_tasks/compaction"); len(v.([]any)) != 0 {
		t.Errorf("a finished task outlived task_ttl 0: %v", v)
	}
	if _, old := restCall(t, srv, "POST", "/task_manager/ttl?ttl=1000"); old != float64(0) {
		t.Errorf("the previous ttl: %v, want 0", old)
	}
	restCall(t, srv, "POST", "/storage_service/keyspace_compaction/ks")
	_, v := restCall(t, srv, "GET", "/task_manager/list_module_tasks/compaction")
	tasks, _ := v.([]any)
	if len(tasks) != 1 || tasks[0].(map[string]any)["type"] != "major compaction" || tasks[0].(map[string]any)["state"] != "done" {
		t.Fatalf("tasks: %v", v)
	}
	id := tasks[0].(map[string]any)["task_id"].(string)
	_, v = restCall(t, srv, "GET", "/task_manager/task_status_recursive/"+id)
	tree, _ := v.([]any)
	if len(tree) != 3 || tree[1].(map[string]any)["parent_id"] != id || tree[2].(map[string]any)["scope"] != "table" ||
		tree[2].(map[string]any)["sequence_number"] != tasks[0].(map[string]any)["sequence_number"] {
		t.Errorf("task tree: %v", v)
	}
	_, v = restCall(t, srv, "POST", "/tasks/compaction/keyspace_compaction/ks")
	async, _ := v.(string)
	if _, st := restCall(t, srv, "GET", "/task_manager/wait_task/"+async); st.(map[string]any)["state"] != "done" {
		t.Errorf("background compaction: %v", st)
	}
	restCall(t, srv, "POST", "/task_manager/drain/compaction")
	wantError(t, srv, "GET", "/task_manager/task_status/"+id, 400, "task with id "+id+" not found")
	wantError(t, srv, "GET", "/task_manager/list_module_tasks/nosuch", 400, "std::runtime_error (module nosuch not found)")
}

// toppartitions counts the replica's writes and reads per partition for its
// duration and names the most frequent "(ks:cf) key" (api/column_family.cc
// rest_toppartitions_generic, db/data_listeners.cc).
func TestRESTTopPartitions(t *testing.T) {
	var log syncBuf
	a, srv := restTableMember(t, &log, "ks", true, 0)
	done := make(chan any)
	go func() {
		_, v := restCall(t, srv, "GET", "/storage_service/toppartitions?table_filters=ks:t&duration=1500&list_size=1")
		done <- v
	}()
	waitFor(t, "the query started", func() bool { return strings.Contains(log.String(), "toppartitions query") })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, key := range []string{"hot\nkey", "hot\nkey", "hot\nkey", "cold"} {
		m := engine.Mutation{Keyspace: "ks", Table: "t", PartitionKey: []byte(key), Cells: map[string][]byte{"v": {byte(i)}}, Timestamp: time.Now().UnixMicro()}
		if err := a.Write(ctx, []engine.Mutation{m}, engine.One); err != nil {
			t.Fatal(err)
		}
	}
	v := (<-done).(map[string]any)
	w := v["write"].([]any)
	if v["write_cardinality"] != float64(2) || len(w) != 1 || w[0].(map[string]any)["partition"] != "(ks:t) hot\nkey" || w[0].(map[string]any)["count"] != float64(3) {
		t.Errorf("toppartitions: %v", v)
	}
	wantError(t, srv, "GET", "/storage_service/toppartitions", 400, "Missing mandatory parameter 'duration'")
}
