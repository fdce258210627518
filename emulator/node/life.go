package node

import (
	"sync"
	"sync/atomic"
)

// Life is what a node's process is, for a node that shares its process
// with others (emulator.Host): the signals a user sends a node process,
// done to one node of it. Between nodes of one process a signal cannot be
// sent, so the node holds its own work at the points where a stopped or
// killed process would be found doing nothing:
//
//   - paused (SIGSTOP): connections stay open and nothing answers. Every
//     point that serves or sends something (a CQL frame, an HTTP request,
//     an internode frame, a heartbeat, a log line) and every write to the
//     node's files waits in Hold until Resume; peers miss its heartbeats
//     and see it down, as they see a stopped process.
//   - killed (SIGKILL): what the process had written stays (the page
//     cache keeps it), nothing more is written. Every Hold parks its
//     goroutine for good: nothing the node does from here reaches its
//     files, its log or its peers; its listeners and connections are
//     closed by the one who kills it (Node.Kill, emulator.Host).
//   - dead (its own fatal error, e.g. Pebble's): killed, with a reason.
//
// A nil Life is a node that has its process to itself: never held.
type Life struct {
	paused, killed atomic.Bool
	mu             sync.Mutex
	resume         chan struct{} // closed by Resume (nil when not paused)
	dead           chan struct{} // closed by Kill
	reason         string        // why the node died by itself ("" when killed)
}

// NewLife returns the life of a running node.
func NewLife() *Life { return &Life{dead: make(chan struct{})} }

// Hold returns at once while the node runs, waits while it is paused and
// never returns once it is killed.
func (l *Life) Hold() {
	if l == nil || !l.paused.Load() && !l.killed.Load() {
		return
	}
	for {
		l.mu.Lock()
		r := l.resume
		l.mu.Unlock()
		if l.killed.Load() {
			select {} // a killed process does nothing more
		}
		if r == nil {
			return
		}
		select {
		case <-r:
		case <-l.dead:
		}
	}
}

// Held reports whether the node is paused or killed: what it would do now
// waits (for good once killed).
func (l *Life) Held() bool { return l != nil && (l.paused.Load() || l.killed.Load()) }

// Paused reports whether the node is paused (and not killed).
func (l *Life) Paused() bool { return l != nil && l.paused.Load() && !l.killed.Load() }

// Killed reports whether the node was killed or died.
func (l *Life) Killed() bool { return l != nil && l.killed.Load() }

// Dead is closed once the node is killed or has died.
func (l *Life) Dead() <-chan struct{} { return l.dead }

// Reason is why the node died by itself ("" when it was killed or runs).
func (l *Life) Reason() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reason
}

// Pause holds the node from now on (SIGSTOP).
func (l *Life) Pause() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.resume == nil {
		l.resume = make(chan struct{})
	}
	l.paused.Store(true)
}

// Resume lets a paused node go on (SIGCONT).
func (l *Life) Resume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paused.Store(false)
	if l.resume != nil {
		close(l.resume)
		l.resume = nil
	}
}

// Kill ends the node's life (SIGKILL); false when it had ended already.
func (l *Life) Kill() bool { return l.die("") }

// Die ends the node's life of its own (a fatal error), with reason.
func (l *Life) Die(reason string) bool { return l.die(reason) }

func (l *Life) die(reason string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.killed.Load() {
		return false
	}
	l.reason = reason
	l.killed.Store(true)
	close(l.dead)
	return true
}

// Kill ends the node as SIGKILL ends its process: its life ends (from
// here nothing it does reaches its files or its peers), it leaves its
// process's in-memory peers, and its internode listener and connections
// close at once, so its peers see the connections end. It waits for
// nothing the node was doing: that work is parked for good (Life.Hold),
// and its store is never flushed or closed (the data a killed process
// had written is what the next start finds).
func (n *Node) Kill() {
	if n.cfg.Life == nil {
		return
	}
	n.cfg.Life.Kill()
	n.abort()
}

// abort closes what the node's peers see of it, waiting for nothing.
func (n *Node) abort() {
	if n.tr != nil {
		n.cfg.Peers.remove(n.internodeAddr(), n.tr)
		if n.tr.direct != nil {
			n.tr.direct.stop.Store(true)
		}
	}
	n.cancel()
	if n.ln != nil {
		n.ln.Close()
	}
	if n.tr != nil {
		n.tr.closeAll()
	}
	// Its watchdog's timer parks at its next tick (capacity.Config.Hold).
}
