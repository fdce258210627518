package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/emulator/node"
)

// A host process runs the nodes of a cluster in one process, each with its
// own listeners, data, log and lifecycle, their internode messages in
// memory (node.Peers), under a control endpoint on a unix socket: the
// launcher (emulator/localcluster.Host) starts, kills, pauses, resumes and
// stops one node of it as it signals one node process.
//
//	elasticity node --control-socket PATH
//
// serves, on PATH (HTTP, JSON; a node is named by its launcher):
//
//	POST /nodes/{name}/start   {"args": [node flags]}  → {"gen": n}
//	POST /nodes/{name}/kill    SIGKILL                 → the exit
//	POST /nodes/{name}/stop?grace=15s  SIGTERM, then SIGKILL after grace → the exit
//	POST /nodes/{name}/pause   SIGSTOP
//	POST /nodes/{name}/resume  SIGCONT
//	GET  /nodes/{name}/wait?gen=n  waits for that start's end → the exit
//	GET  /nodes                {name, gen, state} of each
//
// The exit is what a node process's exit would say (NodeExit): its status
// (1 a startup failure, 2 bad flags or a fatal error), or the signal that
// killed it. A kill is SIGKILL as a user and the node's peers see it: its
// listeners and connections close at once, and nothing it was doing
// reaches its files, log or peers from then on (node.Life); its data is
// what it had written. A node's own fatal error (Pebble's) ends that node
// only. The process's own end (SIGTERM, SIGINT) stops every node
// gracefully; a Go panic ends the process and so every node in it, which
// the launcher reports for each.

// ControlSocketFlag makes `elasticity node` a host process (Main).
const ControlSocketFlag = "--control-socket"

// NodeExit is how a node of a host process ended.
type NodeExit struct {
	// Code is the exit status a process of its own would have had; -1
	// when a signal ended it.
	Code int `json:"code"`
	// Signal is the signal's name ("killed") when one ended it.
	Signal string `json:"signal,omitempty"`
	// Error is the node's own reason (its fatal error, its startup failure).
	Error string `json:"error,omitempty"`
}

// nodeControl is what a host holds of a node it runs: its life and what
// a kill closes (Run registers its listeners and servers as it opens them).
type nodeControl struct {
	life    *node.Life
	mu      sync.Mutex
	killed  bool
	closers []func()
}

func (c *nodeControl) lifeOf() *node.Life {
	if c == nil {
		return nil
	}
	return c.life
}

// onKill registers f to run when the node is killed (at once if it was).
func (c *nodeControl) onKill(f func()) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.killed {
		c.mu.Unlock()
		f()
		return
	}
	c.closers = append(c.closers, f)
	c.mu.Unlock()
}

// kill ends the node's life and closes everything its peers and clients
// see of it, waiting for nothing it was doing.
func (c *nodeControl) kill() {
	c.life.Kill()
	c.mu.Lock()
	if c.killed {
		c.mu.Unlock()
		return
	}
	c.killed = true
	fs := c.closers
	c.closers = nil
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// holdWriter is a node's log: a paused node writes no line, a killed one
// none ever again.
type holdWriter struct {
	w    io.Writer
	life *node.Life
}

func (h holdWriter) Write(p []byte) (int, error) {
	h.life.Hold()
	return h.w.Write(p)
}

// holdHandler serves nothing while the node is paused (a stopped process
// accepts connections into its backlog and answers none).
func holdHandler(life *node.Life, h http.Handler) http.Handler {
	if life == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		life.Hold()
		h.ServeHTTP(w, r)
	})
}

// host is a host process's nodes.
type host struct {
	ctx    context.Context
	peers  *node.Peers
	stderr io.Writer
	mu     sync.Mutex
	nodes  map[string]*hosted
	gen    int
	wg     sync.WaitGroup // the nodes' Run calls that may still end
}

// hosted is one start of a node.
type hosted struct {
	name   string
	gen    int
	ctl    *nodeControl
	cancel context.CancelFunc
	done   chan struct{} // closed once exit is set
	once   sync.Once
	exit   NodeExit
	ran    chan struct{} // closed when Run returned
}

func (h *hosted) finish(e NodeExit) bool {
	set := false
	h.once.Do(func() {
		h.exit = e
		set = true
		close(h.done)
	})
	return set
}

func (h *hosted) ended() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// RunHost makes this process a host (`elasticity node --control-socket`):
// it serves the control endpoint on socket until ctx ends, then stops
// every node gracefully; its exit code.
func RunHost(ctx context.Context, socket string, stderr io.Writer) int {
	os.Remove(socket) // a leftover of a killed host
	ln, err := net.Listen("unix", socket)
	if err != nil {
		fmt.Fprintf(stderr, "elasticity node: control socket: %v\n", err)
		return 1
	}
	defer os.Remove(socket)
	h := &host{ctx: ctx, peers: node.NewPeers(), stderr: stderr, nodes: map[string]*hosted{}}
	srv := &http.Server{Handler: h.handler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	<-ctx.Done()
	// The process's SIGTERM: every running node shuts down as its own
	// process would, the control endpoint answering until they have.
	h.mu.Lock()
	var running []*hosted
	for _, n := range h.nodes {
		if !n.ended() {
			n.ctl.life.Resume()
			n.cancel()
			running = append(running, n)
		}
	}
	h.mu.Unlock()
	for _, n := range running {
		<-n.done
	}
	srv.Close()
	return 0
}

func (h *host) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /nodes/{name}/start", h.start)
	mux.HandleFunc("POST /nodes/{name}/kill", func(w http.ResponseWriter, r *http.Request) {
		n := h.lookup(w, r)
		if n == nil {
			return
		}
		h.kill(n)
		writeJSON(w, n.exit)
	})
	mux.HandleFunc("POST /nodes/{name}/stop", func(w http.ResponseWriter, r *http.Request) {
		n := h.lookup(w, r)
		if n == nil {
			return
		}
		grace := 15 * time.Second
		if g := r.URL.Query().Get("grace"); g != "" {
			d, err := time.ParseDuration(g)
			if err != nil {
				http.Error(w, "grace: "+err.Error(), http.StatusBadRequest)
				return
			}
			grace = d
		}
		// SIGTERM (and SIGCONT: a paused node must wake up to see it).
		n.ctl.life.Resume()
		n.cancel()
		select {
		case <-n.done:
		case <-time.After(grace):
			h.kill(n)
		}
		writeJSON(w, n.exit)
	})
	mux.HandleFunc("POST /nodes/{name}/pause", func(w http.ResponseWriter, r *http.Request) {
		if n := h.lookup(w, r); n != nil {
			if n.ended() {
				http.Error(w, "node "+n.name+" is not running", http.StatusConflict)
				return
			}
			n.ctl.life.Pause()
			writeJSON(w, map[string]int{"gen": n.gen})
		}
	})
	mux.HandleFunc("POST /nodes/{name}/resume", func(w http.ResponseWriter, r *http.Request) {
		if n := h.lookup(w, r); n != nil {
			n.ctl.life.Resume()
			writeJSON(w, map[string]int{"gen": n.gen})
		}
	})
	mux.HandleFunc("GET /nodes/{name}/wait", func(w http.ResponseWriter, r *http.Request) {
		n := h.lookup(w, r)
		if n == nil {
			return
		}
		if g := r.URL.Query().Get("gen"); g != "" && g != strconv.Itoa(n.gen) {
			http.Error(w, fmt.Sprintf("node %s is at start %d, not %s", n.name, n.gen, g), http.StatusGone)
			return
		}
		select {
		case <-n.done:
			writeJSON(w, n.exit)
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("GET /nodes", func(w http.ResponseWriter, r *http.Request) {
		type state struct {
			Name  string    `json:"name"`
			Gen   int       `json:"gen"`
			State string    `json:"state"`
			Exit  *NodeExit `json:"exit,omitempty"`
		}
		var out []state
		h.mu.Lock()
		for _, n := range h.nodes {
			s := state{Name: n.name, Gen: n.gen, State: "running"}
			switch {
			case n.ended():
				s.State, s.Exit = "exited", &n.exit
			case n.ctl.life.Paused():
				s.State = "paused"
			}
			out = append(out, s)
		}
		h.mu.Unlock()
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		writeJSON(w, out)
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (h *host) lookup(w http.ResponseWriter, r *http.Request) *hosted {
	name := r.PathValue("name")
	h.mu.Lock()
	n := h.nodes[name]
	h.mu.Unlock()
	if n == nil {
		http.Error(w, "no node "+name, http.StatusNotFound)
	}
	return n
}

// kill is SIGKILL to one node: its exit is "killed" unless it had ended.
func (h *host) kill(n *hosted) {
	n.ctl.kill()
	n.finish(NodeExit{Code: -1, Signal: "killed"})
	n.cancel() // what it was doing ends or parks (node.Life)
}

func (h *host) start(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var req struct {
		Args []string `json:"args"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	if old := h.nodes[name]; old != nil && !old.ended() {
		h.mu.Unlock()
		http.Error(w, "node "+name+" is running", http.StatusConflict)
		return
	}
	if h.ctx.Err() != nil {
		h.mu.Unlock()
		http.Error(w, "the host is shutting down", http.StatusServiceUnavailable)
		return
	}
	h.gen++
	ctx, cancel := context.WithCancel(h.ctx)
	n := &hosted{name: name, gen: h.gen, ctl: &nodeControl{life: node.NewLife()}, cancel: cancel, done: make(chan struct{}), ran: make(chan struct{})}
	h.nodes[name] = n
	h.mu.Unlock()
	h.sizeProcs()
	go func() {
		defer close(n.ran)
		defer h.sizeProcs()
		code, reason := runNode(ctx, req.Args, h.stderr, h.peers, n.ctl)
		n.finish(NodeExit{Code: code, Error: reason})
	}()
	go func() {
		// The node's own death (a fatal error): it ends that node only.
		select {
		case <-n.ctl.life.Dead():
			if reason := n.ctl.life.Reason(); reason != "" {
				fmt.Fprintf(h.stderr, "elasticity node %s: fatal: %s\n", name, reason)
				n.ctl.kill()
				n.finish(NodeExit{Code: 2, Error: reason})
				n.cancel()
			}
		case <-n.ran:
		}
	}()
	writeJSON(w, map[string]int{"gen": n.gen})
}

// sizeProcs gives the Go runtime as many Ps as the nodes would have had as
// processes of their own (each process gets one P per CPU), up to three
// nodes' worth (hostProcs), unless the user set GOMAXPROCS. With one P per
// CPU for the whole host, a node's request waited behind other nodes'
// goroutines for up to the runtime's 10 ms preemption slice, where the
// kernel time-slices separate processes finely: on 2 CPUs the main job's
// Cycle #0 P99 was 14-16 ms shared and 3.8 ms per process; with
// GOMAXPROCS=6 shared, 3.7 ms (issue 45).
func (h *host) sizeProcs() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	h.mu.Lock()
	running := 0
	for _, n := range h.nodes {
		if !n.ended() {
			running++
		}
	}
	h.mu.Unlock()
	runtime.GOMAXPROCS(hostProcs(running, runtime.NumCPU()))
}

// hostProcs is the Ps of a host running nodes on cpus CPUs: one per CPU
// per node, as many as separate node processes would have, for up to
// maxProcNodes nodes. More Ps than that only add threads for the kernel to
// time-slice on the same CPUs: in the main job on 2 CPUs, with 12 Ps once
// 6 nodes ran, the last cycle's client P99 was 7.0-8.9 ms against the
// nodes' own 2.6-2.8 ms; with 6, 4.5-4.7 ms against 1.9-2.0 (two runs
// each, alternately; Cycles #0-#2 alike).
func hostProcs(nodes, cpus int) int {
	return max(1, min(nodes, maxProcNodes)) * max(1, cpus)
}

// maxProcNodes is how many nodes' worth of Ps a host gives the runtime:
// the three of a starting cluster, the fewest that measured as well as a
// process per node (above).
const maxProcNodes = 3

// runNode runs one node of a host with its flags: its exit status, and
// why when it failed.
func runNode(ctx context.Context, args []string, stderr io.Writer, peers *node.Peers, ctl *nodeControl) (int, string) {
	c := DefaultConfig()
	c.Stderr = stderr
	c.CommandLine = strings.Join(append([]string{os.Args[0], "node"}, args...), " ")
	c.Peers = peers
	c.control = ctl
	fs := Flags(&c)
	var flagErr strings.Builder
	fs.SetOutput(&flagErr)
	if err := fs.Parse(args); err != nil {
		fmt.Fprint(stderr, flagErr.String())
		return 2, err.Error()
	}
	// The codes of `elasticity node` (cmd/elasticity: invalid 2, startup
	// failed 1, any other failure 3).
	if err := Run(ctx, c); err != nil {
		fmt.Fprintf(stderr, "elasticity node: %v\n", err)
		switch {
		case errors.Is(err, ErrInvalidConfig):
			return 2, err.Error()
		case errors.Is(err, ErrStartupFailed):
			return 1, err.Error()
		}
		return 3, err.Error()
	}
	return 0, ""
}
