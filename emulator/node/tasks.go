package node

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/engine"
)

// The task manager as ScyllaDB keeps it (tasks/task_manager.cc,
// tasks/task_handler.cc, api/task_manager.cc): each operation the API
// starts is a tree of tasks in a module ("compaction", "repair"); a root
// task is listed while it runs and for task_ttl_in_seconds after it
// finished (user_task_ttl_in_seconds for one a user started through the
// /tasks API; db/config.cc defaults 0 and 3600), its children are dropped
// as they finish and only seen through the root's recursive status. A
// compaction's tree is compaction/task_manager_module.hh's: the keyspace's
// task, a task for the shard, a task for each table.

// task is one node of a task tree.
type task struct {
	ID, Module, Type, Scope string
	Keyspace, Table, Entity string
	Seq                     int64
	Shard                   int
	user, abortable         bool
	mu                      sync.Mutex
	state, err              string
	start, end              time.Time
	parent                  *task
	children                []*task
	total, completed        float64
	cancel                  context.CancelFunc
	done                    chan struct{}
}

// taskManager holds the registered root tasks by id.
type taskManager struct {
	mu           sync.Mutex
	roots        map[string]*task
	seq          map[string]int64
	ttl, userTTL int64 // seconds
}

// taskModules are the modules this node has (of ScyllaDB's: compaction and
// repair, the ones whose operations the emulator runs).
var taskModules = []string{"compaction", "repair"}

func knownModule(m string) bool {
	for _, k := range taskModules {
		if k == m {
			return true
		}
	}
	return false
}

func newTaskManager() *taskManager {
	return &taskManager{roots: map[string]*task{}, seq: map[string]int64{}, userTTL: 3600}
}

// errAborted is seastar's abort_requested_exception as a task's error.
var errAborted = errors.New("seastar::abort_requested_exception (abort requested)")

// newRoot registers a root task of module.
func (tm *taskManager) newRoot(ctx context.Context, module, typ, scope, ks, table string, user bool) (*task, context.Context) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.seq[module]++
	ctx, cancel := context.WithCancel(ctx)
	t := &task{ID: newUUID(), Module: module, Type: typ, Scope: scope, Keyspace: ks, Table: table, Seq: tm.seq[module],
		user: user, abortable: true, state: "created", cancel: cancel, done: make(chan struct{})}
	tm.roots[t.ID] = t
	return t, ctx
}

// nextSeq takes a module's next sequence number without a task (a repair
// of a keyspace with nothing to repair).
func (tm *taskManager) nextSeq(module string) int64 {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.seq[module]++
	return tm.seq[module]
}

// child adds a child task that inherits the parent's sequence number.
func (t *task) child(scope, table string) *task {
	c := &task{ID: newUUID(), Module: t.Module, Type: t.Type, Scope: scope, Keyspace: t.Keyspace, Table: table, Seq: t.Seq,
		abortable: t.abortable, state: "created", parent: t, done: make(chan struct{})}
	t.mu.Lock()
	t.children = append(t.children, c)
	t.mu.Unlock()
	return c
}

// run runs f as the task and records its outcome; progress is counted in
// finished leaves (a parent's progress is its children's sum).
func (t *task) run(ctx context.Context, f func(context.Context) error) error {
	t.mu.Lock()
	t.state, t.start = "running", time.Now()
	t.mu.Unlock()
	err := ctx.Err()
	if err == nil {
		err = f(ctx)
	}
	if ctx.Err() != nil && err != nil {
		err = errAborted
	}
	t.mu.Lock()
	t.end = time.Now()
	if err != nil {
		t.state, t.err = "failed", err.Error()
	} else {
		t.state = "done"
	}
	if len(t.children) == 0 {
		t.total = 1
		if err == nil {
			t.completed = 1
		}
	} else {
		t.total, t.completed = 0, 0
		for _, c := range t.children {
			c.mu.Lock()
			t.total += c.total
			t.completed += c.completed
			c.mu.Unlock()
		}
	}
	t.mu.Unlock()
	close(t.done)
	return err
}

// finished unregisters a root task after its time to live.
func (tm *taskManager) finished(t *task) {
	tm.mu.Lock()
	ttl := tm.ttl
	if t.user {
		ttl = tm.userTTL
	}
	tm.mu.Unlock()
	if ttl == 0 {
		tm.unregister(t.ID) // before the operation's answer, not after it
		return
	}
	time.AfterFunc(time.Duration(ttl)*time.Second, func() { tm.unregister(t.ID) })
}

func (tm *taskManager) unregister(id string) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	delete(tm.roots, id)
}

func (tm *taskManager) find(id string) (*task, error) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if t := tm.roots[id]; t != nil {
		return t, nil
	}
	return nil, badParam("task with id %s not found", id)
}

// taskStatus is task_manager's task_status (api-doc/task_manager.json).
type taskStatus struct {
	ID                string      `json:"id"`
	Type              string      `json:"type"`
	Kind              string      `json:"kind"`
	Scope             string      `json:"scope"`
	State             string      `json:"state"`
	IsAbortable       bool        `json:"is_abortable"`
	StartTime         string      `json:"start_time"`
	EndTime           string      `json:"end_time"`
	Error             string      `json:"error"`
	ParentID          string      `json:"parent_id"`
	SequenceNumber    int64       `json:"sequence_number"`
	Shard             int         `json:"shard"`
	Keyspace          string      `json:"keyspace"`
	Table             string      `json:"table"`
	Entity            string      `json:"entity"`
	ProgressUnits     string      `json:"progress_units"`
	ProgressTotal     float64     `json:"progress_total"`
	ProgressCompleted float64     `json:"progress_completed"`
	ChildrenIDs       []taskIdent `json:"children_ids"`
}

type taskIdent struct {
	TaskID string `json:"task_id"`
	Node   string `json:"node"`
}

// taskStats is task_manager's task_stats, a listing's row.
type taskStats struct {
	TaskID         string `json:"task_id"`
	State          string `json:"state"`
	Type           string `json:"type"`
	Kind           string `json:"kind"`
	Scope          string `json:"scope"`
	Keyspace       string `json:"keyspace"`
	Table          string `json:"table"`
	Entity         string `json:"entity"`
	SequenceNumber int64  `json:"sequence_number"`
	Shard          int    `json:"shard"`
	StartTime      string `json:"start_time"`
	EndTime        string `json:"end_time"`
}

// apiTime is a task time as Seastar's JSON writes a std::tm; a time not
// set is the epoch.
func apiTime(t time.Time) string {
	if t.IsZero() {
		t = time.Unix(0, 0)
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

func (t *task) status(addr string) taskStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := taskStatus{ID: t.ID, Type: t.Type, Kind: "node", Scope: t.Scope, State: t.state, IsAbortable: t.abortable,
		StartTime: apiTime(t.start), EndTime: apiTime(t.end), Error: t.err, ParentID: "none", SequenceNumber: t.Seq,
		Shard: t.Shard, Keyspace: t.Keyspace, Table: t.Table, Entity: t.Entity, ProgressUnits: "",
		ProgressTotal: t.total, ProgressCompleted: t.completed, ChildrenIDs: []taskIdent{}}
	if t.parent != nil {
		s.ParentID = t.parent.ID
	}
	for _, c := range t.children {
		s.ChildrenIDs = append(s.ChildrenIDs, taskIdent{c.ID, addr})
	}
	return s
}

// recursive is the tree's statuses, breadth first from t.
func (t *task) recursive(addr string) []taskStatus {
	var out []taskStatus
	queue := []*task{t}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		out = append(out, x.status(addr))
		x.mu.Lock()
		queue = append(queue, x.children...)
		x.mu.Unlock()
	}
	return out
}

// tableOp is an operation's work on one table.
type tableOp func(ctx context.Context, t *engine.Table) error

// keyspaceSubtree hangs the shard's task and a task per table under
// parent and returns the work that runs them.
func keyspaceSubtree(parent *task, ts []*engine.Table, op tableOp) func(context.Context) error {
	shard := parent.child("shard", "")
	leaves := make([]*task, len(ts))
	for i, t := range ts {
		leaves[i] = shard.child("table", t.Name)
	}
	return func(ctx context.Context) error {
		return shard.run(ctx, func(ctx context.Context) error {
			for i, t := range ts {
				if err := leaves[i].run(ctx, func(ctx context.Context) error { return op(ctx, t) }); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// runTaskTree registers root work as a compaction module task and runs
// it: with wait it returns once the tree finished, with its error;
// without, at once (the /tasks API: a user task that outlives the request).
func (n *Node) runTaskTree(ctx context.Context, typ, scope, ks string, wait bool, build func(root *task) func(context.Context) error) (*task, error) {
	if !wait {
		ctx = n.ctx
	}
	root, ctx := n.tasks.newRoot(ctx, "compaction", typ, scope, ks, "", !wait)
	work := build(root)
	if !wait {
		go func() {
			defer n.tasks.finished(root)
			root.run(ctx, work)
		}()
		return root, nil
	}
	defer n.tasks.finished(root)
	return root, root.run(ctx, work)
}

// runKeyspaceTask runs op on each of a keyspace's tables as a task tree
// (keyspace → shard → table).
func (n *Node) runKeyspaceTask(ctx context.Context, typ, ks string, ts []*engine.Table, wait bool, op tableOp) (*task, error) {
	return n.runTaskTree(ctx, typ, "keyspace", ks, wait, func(root *task) func(context.Context) error {
		return keyspaceSubtree(root, ts, op)
	})
}

// restTasks adds task_manager's routes (api/task_manager.cc).
func (n *Node) restTasks(rt *restRouter) {
	addr := n.cfg.ListenAddress
	rt.handle("GET /task_manager/list_modules", func(r *http.Request) (any, error) { return taskModules, nil })
	rt.handle("GET /task_manager/list_module_tasks/{module}", func(r *http.Request) (any, error) {
		module := r.PathValue("module")
		if !knownModule(module) {
			return nil, badParam("std::runtime_error (module %s not found)", module)
		}
		q := r.URL.Query()
		n.tasks.mu.Lock()
		roots := make([]*task, 0, len(n.tasks.roots))
		for _, t := range n.tasks.roots {
			if t.Module == module && (q.Get("keyspace") == "" || q.Get("keyspace") == t.Keyspace) && (q.Get("table") == "" || q.Get("table") == t.Table) {
				roots = append(roots, t)
			}
		}
		n.tasks.mu.Unlock()
		sort.Slice(roots, func(i, j int) bool { return roots[i].Seq < roots[j].Seq })
		out := []taskStats{}
		for _, t := range roots {
			s := t.status(addr)
			out = append(out, taskStats{TaskID: s.ID, State: s.State, Type: s.Type, Kind: s.Kind, Scope: s.Scope, Keyspace: s.Keyspace,
				Table: s.Table, Entity: s.Entity, SequenceNumber: s.SequenceNumber, Shard: s.Shard, StartTime: s.StartTime, EndTime: s.EndTime})
		}
		return out, nil
	})
	rt.handle("GET /task_manager/task_status/{task_id}", func(r *http.Request) (any, error) {
		t, err := n.tasks.find(r.PathValue("task_id"))
		if err != nil {
			return nil, err
		}
		return t.status(addr), nil
	})
	rt.handle("GET /task_manager/task_status_recursive/{task_id}", func(r *http.Request) (any, error) {
		t, err := n.tasks.find(r.PathValue("task_id"))
		if err != nil {
			return nil, err
		}
		return t.recursive(addr), nil
	})
	rt.handle("GET /task_manager/wait_task/{task_id}", func(r *http.Request) (any, error) {
		t, err := n.tasks.find(r.PathValue("task_id"))
		if err != nil {
			return nil, err
		}
		var timeout <-chan time.Time
		if s := r.URL.Query().Get("timeout"); s != "" {
			secs, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return nil, badParam("timeout (%s): type error - should be uint32", s)
			}
			timeout = time.After(time.Duration(secs) * time.Second)
		}
		select {
		case <-t.done:
			return t.status(addr), nil
		case <-timeout:
			return nil, &restError{http.StatusRequestTimeout, "seastar::timed_out_error (timedout)"}
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	})
	rt.handle("POST /task_manager/abort_task/{task_id}", func(r *http.Request) (any, error) {
		t, err := n.tasks.find(r.PathValue("task_id"))
		if err != nil {
			return nil, err
		}
		if !t.abortable {
			return nil, &restError{http.StatusForbidden, "task with id " + t.ID + " cannot be aborted"}
		}
		t.cancel()
		return voidReply{}, nil
	})
	for _, p := range []struct {
		name string
		v    *int64
	}{{"ttl", &n.tasks.ttl}, {"user_ttl", &n.tasks.userTTL}} {
		rt.handle("GET /task_manager/"+p.name, func(r *http.Request) (any, error) {
			n.tasks.mu.Lock()
			defer n.tasks.mu.Unlock()
			return *p.v, nil
		})
		rt.handle("POST /task_manager/"+p.name, func(r *http.Request) (any, error) {
			s := r.URL.Query().Get(p.name)
			x, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return nil, badParam("std::invalid_argument (%s)", s)
			}
			n.tasks.mu.Lock()
			defer n.tasks.mu.Unlock()
			old := *p.v
			*p.v = int64(x)
			return old, nil
		}, p.name)
	}
	rt.handle("POST /task_manager/drain/{module}", func(r *http.Request) (any, error) {
		module := r.PathValue("module")
		if !knownModule(module) {
			return nil, badParam("std::runtime_error (module %s not found)", module)
		}
		n.tasks.mu.Lock()
		defer n.tasks.mu.Unlock()
		for id, t := range n.tasks.roots {
			select {
			case <-t.done:
				if t.Module == module {
					delete(n.tasks.roots, id)
				}
			default:
			}
		}
		return voidReply{}, nil
	})
}
