package capacity

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Background scheduling groups: work that shares a shard with requests
// (the statement group) as Seastar's CPU scheduler shares it. Each group's
// work runs in tasks of one quota: alone in the gaps between requests,
// where the groups with work split the time by their shares, and, while
// requests queue, one task of a group for every total/shares quotas of the
// busy shard's time since the group got work (Seastar's fair pick by
// virtual runtime, src/core/reactor.cc run_tasks_impl: the active queue
// with the least vruntime runs, and account_runtime adds runtime/shares).
// The share is owed from the moment the group has work, however many
// requests are queued ahead: task_queue_group::activate starts a queue at
// the last vruntime, so it does not wait behind the statement group's
// backlog. A request arriving while background work runs alone waits for
// the task in progress; the statement group then runs first, having been
// activated at the last group's virtual runtime.
//
// Requests are planned when they arrive. When a group gets work while
// requests are queued, it shares the shard with them from then on, as
// Seastar's activation does: its tasks go into the queued requests' time,
// one quota after the statement group's current one and then one for every
// q × StatementShares / shares of statement time (a stretch), and the
// requests queued before it end that much later (a request re-reads its
// end when it wakes). Tasks owed for busy time past the stretch go behind
// the requests queued by then (plan), as before.
const (
	// Streaming is the streaming group, StreamingShares.
	Streaming = iota
	// Compaction is the compaction group, at the shares of
	// Config.CompactionShares (its backlog controller).
	Compaction
	numGroups
)

// groupNames are the groups' names as stall reports print them.
var groupNames = [numGroups]string{"streaming", "compaction"}

type group struct {
	work   int64 // queued work not yet run (ns of shard time)
	queued int64 // all work ever queued (positions of waiters)
	done   int64 // all work run (ahead of real time for tasks between requests)
	credit int64 // busy shard time since this group's last task while it had work
	// inflight is work given tasks in queued requests' time (a stretch),
	// done once its last task ends at inflightEnd.
	inflight, inflightEnd int64
	// covered: the busy time up to here earned no credit, its share was
	// given in a stretch.
	covered int64
}

// stretch is a group's tasks put into the time of the requests already
// queued when it got work: from at on, a task of q every per of their
// time, total in all. A request planned before it and ending at e ends
// extra(e) later.
type stretch struct {
	at, per, q, total int64
	until             int64 // the shard's busy end after it (for pruning)
}

// extra is how much later a request that was to end at e ends: the tasks
// that start before e.
func (st *stretch) extra(e int64) int64 {
	if e <= st.at {
		return 0
	}
	n := (e - st.at + st.per - 1) / st.per
	return min(st.total, n*st.q)
}

// stretchKeep is how long after its end a stretch is kept for the
// requests queued before it: they wake by then (MaxBacklog is seconds).
const stretchKeep = int64(30 * time.Second)

// background is a shard's background groups.
type background struct {
	g       [numGroups]group
	at      int64 // virtual time up to which the idle gaps have been given out
	runFrom int64 // start of the current run of background tasks alone (their quota phase)
	runEnd  int64 // end of the last run alone
}

func (b *background) work() int64 {
	var w int64
	for i := range b.g {
		w += b.g[i].work
	}
	return w
}

// shares is group i's shares on shard s now.
func (m *Model) shares(s *shard, i int) float64 {
	switch {
	case i == Streaming:
		return StreamingShares
	case m.cfg.CompactionShares != nil:
		g := &s.bg.g[i]
		return max(1, m.cfg.CompactionShares(time.Duration(g.work+g.inflight))) // the backlog not yet run
	}
	return StatementShares
}

// share runs up to d of the groups' work, split by their shares while more
// than one has work, and returns the time used. Called with s.mu held.
func (m *Model) share(s *shard, d int64) int64 {
	var used int64
	for d > 0 {
		var sh [numGroups]float64
		var total float64
		for i := range s.bg.g {
			if s.bg.g[i].work > 0 {
				sh[i] = m.shares(s, i)
				total += sh[i]
			}
		}
		if total == 0 {
			break
		}
		// Until the first group runs out of work, or d ends.
		dt, first := d, -1
		for i, x := range sh {
			if x > 0 {
				if t := int64(math.Ceil(float64(s.bg.g[i].work) * total / x)); t <= dt {
					dt, first = t, i
				}
			}
		}
		for i, x := range sh {
			if x == 0 {
				continue
			}
			g := &s.bg.g[i]
			r := min(g.work, int64(float64(dt)*x/total))
			if i == first {
				r = g.work
			}
			g.work -= r
			g.done += r
		}
		d -= dt
		used += dt
	}
	return used
}

// total is the shares of the statement group and the groups with work on
// shard s: a group with work gets shares/total of a busy shard.
func (m *Model) total(s *shard) float64 {
	t := float64(StatementShares)
	for i := range s.bg.g {
		if s.bg.g[i].work > 0 {
			t += m.shares(s, i)
		}
	}
	return t
}

// placement is where a request of svc goes on a shard's timeline: behind
// task ns of background work that starts at taskStart (the rest of a task
// running alone, or the tasks the groups' shares are owed), from start on.
type placement struct {
	start, taskStart, task int64
	tasks                  [numGroups]int64 // the owed tasks, per group
	credit                 [numGroups]int64 // the groups' credit after the request
	group                  int              // the group with the most of task
	// alone: the task is the rest of one already running alone since
	// taskStart; otherwise it is new tasks.
	alone bool
}

// plan places a request of svc arriving at now (after advance). Called
// with s.mu held; changes nothing.
func (m *Model) plan(s *shard, now, svc int64) placement {
	pl := placement{start: max(now, s.busyUntil)}
	w := s.bg.work()
	if w == 0 {
		return pl
	}
	q := m.quota()
	most := int64(-1)
	for i := range s.bg.g {
		if s.bg.g[i].work > most {
			pl.group, most = i, s.bg.g[i].work
		}
	}
	if s.busyUntil <= now {
		// Background work runs alone: the request waits for its task.
		phase := (now - s.bg.runFrom) % q
		pl.taskStart, pl.task, pl.alone = now-phase, min(w, q-phase), true
		pl.start = now + pl.task
		for i := range s.bg.g {
			pl.credit[i] = 0 // the busy time from now on earns its tasks (advance)
		}
		return pl
	}
	// The tasks the busy time since a group's last one is worth: more
	// than one when requests are longer than its quotas.
	pl.taskStart = pl.start
	total := m.total(s)
	for i := range s.bg.g {
		g := &s.bg.g[i]
		if g.work == 0 {
			continue
		}
		per := max(1, int64(float64(q)*total/m.shares(s, i)))
		owed := g.credit / per
		pl.tasks[i] = min(g.work, owed*q)
		pl.credit[i] = g.credit - owed*per
		pl.task += pl.tasks[i]
	}
	pl.start += pl.task
	return pl
}

// runTask commits the background task a request was placed behind and
// returns it as a batch a request waited for. Called with s.mu held.
func (m *Model) runTask(s *shard, now int64, pl placement) *batch {
	if pl.alone {
		m.share(s, pl.task)
		s.bg.runEnd = pl.start
		s.push(now, pl.start, now)
	} else {
		for i, t := range pl.tasks {
			s.bg.g[i].work -= t
			s.bg.g[i].done += t
		}
		s.push(pl.taskStart, pl.start, now)
	}
	return &batch{queued: now, start: pl.taskStart, end: pl.start, waited: true}
}

// taskStalled reports a background task that held the shard past the
// stall threshold while a request waited behind it (a slow node's).
func (m *Model) taskStalled(s *shard, shard int, group string, b *batch) {
	d := time.Duration(b.end - b.start)
	if m.cfg.StallThreshold <= 0 || d <= m.cfg.StallThreshold {
		return
	}
	m.scheduleReports(s, shard, group, b, d)
	time.AfterFunc(time.Until(m.epoch.Add(time.Duration(b.end))), func() { m.report(shard, d) })
}

// quota is the task quota, stretched on a slow node.
func (m *Model) quota() int64 {
	return int64(float64(m.cfg.TaskQuota) * m.cfg.SlowFactor)
}

// advance gives the shard's idle time up to now to the queued background
// work, which runs alone there. Called with s.mu held.
func (m *Model) advance(s *shard, now int64) {
	b := &s.bg
	// The busy time since the last call earns each group with work its
	// share, whatever was queued ahead of it, unless a stretch gave it.
	for i := range b.g {
		g := &b.g[i]
		if busy := min(now, s.busyUntil) - max(b.at, g.covered); busy > 0 && g.work > 0 {
			g.credit += busy
		}
		if g.inflight > 0 && now >= g.inflightEnd {
			g.done += g.inflight
			g.inflight = 0
		}
	}
	from := max(b.at, s.busyUntil)
	b.at = max(b.at, now)
	if from >= now || b.work() == 0 {
		return
	}
	if from != b.runEnd {
		b.runFrom = from
		for i := range b.g {
			b.g[i].credit = 0
		}
	}
	run := m.share(s, now-from)
	b.runEnd = from + run
	s.push(from, from+run, now)
}

// queue adds d of group i's work to shard s and returns its position.
// Called with s.mu held.
func (m *Model) queue(s *shard, now int64, i int, d int64) int64 {
	m.advance(s, now)
	if s.bg.work() == 0 && s.busyUntil <= now {
		s.bg.runFrom, s.bg.runEnd = now, now // starts running alone at once
	}
	g := &s.bg.g[i]
	activated := g.work == 0
	if activated {
		g.credit = 0 // activated at the last vruntime: no banked advantage
	}
	g.work += d
	g.queued += d
	pos := g.queued
	if activated && d > 0 && s.busyUntil > now {
		m.shareQueued(s, now, i)
	}
	return pos
}

// shareQueued gives group i, just activated at now, its share of the
// requests' time already queued on shard s (Seastar's reactor.cc:
// task_queue_group::activate sets its vruntime to the last one run, so it
// runs after the statement group's current quota, then whenever that
// group's vruntime passes its own, account_runtime adding runtime/shares:
// once for every quota × StatementShares / shares of statement time).
// The tasks lengthen the queue; the requests in it re-read their ends
// (shiftedEnd). Called with s.mu held.
func (m *Model) shareQueued(s *shard, now int64, i int) {
	q := m.quota()
	g := &s.bg.g[i]
	// After the current quota, or after its tasks of an earlier stretch
	// still to run (it has stayed active since).
	at := max(now+q, g.covered)
	if s.busyUntil <= at {
		return // it runs after the queue, alone (advance)
	}
	per := max(1, int64(float64(q)*StatementShares/m.shares(s, i)))
	st := stretch{at: at, per: per, q: q}
	n := (s.busyUntil - at + per - 1) / per // task points before the queue ends
	st.total = min(g.work, n*q)
	tasks := (st.total + q - 1) / q
	lastEnd := st.at + (tasks-1)*per + st.total // the last task's end, after the tasks before it
	g.work -= st.total
	g.inflight += st.total
	g.inflightEnd = max(g.inflightEnd, lastEnd)
	s.push(s.busyUntil, s.busyUntil+st.total, now)
	// Its share is given up to the queue's end, or, when its work ran out
	// first, up to where its next task would have gone: more work arriving
	// while it is still active goes on from there (no second activation).
	g.covered = s.busyUntil
	if g.work == 0 {
		g.covered = lastEnd + per - q
	}
	st.until = s.busyUntil
	for len(s.stretches) > 0 && s.stretches[0].until+stretchKeep < now {
		s.stretches = s.stretches[1:]
		s.stretchBase++
	}
	s.stretches = append(s.stretches, st)
	s.made.Store(s.stretchSeq())
}

// stretchSeq is the number of stretches made on s so far: a request
// planned now is moved by the ones made after. Called with s.mu held.
func (s *shard) stretchSeq() int64 {
	return s.stretchBase + int64(len(s.stretches))
}

// shiftedEnd is when a request planned after seq stretches, to end at
// end, ends now that more may have been made, and the count of them.
// Called with s.mu held.
func (s *shard) shiftedEnd(seq, end int64) (int64, int64) {
	for k := max(seq-s.stretchBase, 0); k < int64(len(s.stretches)); k++ {
		end += s.stretches[k].extra(end)
	}
	return end, s.stretchSeq()
}

// work is the shard time bytes take at bytesPerSec, stretched on a slow node.
func (m *Model) work(bytes int64, bytesPerSec float64) int64 {
	return int64(float64(bytes) / bytesPerSec * m.cfg.SlowFactor * float64(time.Second))
}

// Stream runs streaming bytes on shard at bytesPerSec (the shard's
// bandwidth when it does nothing else, divided by SlowFactor) in the
// streaming group: alone it has the whole shard; while requests queue it
// gets StreamingShares of every StatementShares+StreamingShares of the
// shard's time, so requests slow it down and it slows requests by a sixth.
// It returns when its bytes have been run or ctx ends.
func (m *Model) Stream(ctx context.Context, shard int, bytes int64, bytesPerSec float64) error {
	if bytes <= 0 {
		return nil
	}
	if bytesPerSec <= 0 {
		return fmt.Errorf("stream %d bytes on shard %d: bandwidth must be positive", bytes, shard)
	}
	s := m.shard(shard)
	s.mu.Lock()
	pos := m.queue(s, m.now(), Streaming, m.work(bytes, bytesPerSec))
	s.mu.Unlock()
	g := &s.bg.g[Streaming]
	for {
		now := m.now()
		s.mu.Lock()
		m.advance(s, now)
		if g.done >= pos {
			s.mu.Unlock()
			return nil
		}
		until := m.streamDone(s, now, pos-g.done-g.inflight)
		if g.inflight > 0 {
			until = max(until, g.inflightEnd)
		}
		s.mu.Unlock()
		if err := m.sleepUntil(ctx, max(until, now+int64(minSleep))); err != nil {
			s.mu.Lock()
			if g.queued == pos { // the last queued: take back what has not run
				left := min(g.work, pos-g.done)
				g.work -= left
				g.queued -= left
			}
			s.mu.Unlock()
			return err
		}
	}
}

// streamDone is when rest of streaming work on s would be done if no more
// requests came: at its share while the queued requests last, then alone.
// Later requests push it further. Called with s.mu held.
func (m *Model) streamDone(s *shard, now, rest int64) int64 {
	frac := m.shares(s, Streaming) / m.total(s)
	busy := max(0, s.busyUntil-now)
	if shared := int64(float64(rest) / frac); shared <= busy {
		return now + shared
	}
	return now + busy + rest - int64(float64(busy)*frac)
}

// Compact queues compaction of bytes on shard at bytesPerSec (its
// bandwidth alone) in the compaction group and returns at once: the
// compaction has happened in the store; the model runs its cost.
func (m *Model) Compact(shard int, bytes int64, bytesPerSec float64) {
	if bytes <= 0 || bytesPerSec <= 0 {
		return
	}
	s := m.shard(shard)
	s.mu.Lock()
	m.queue(s, m.now(), Compaction, m.work(bytes, bytesPerSec))
	s.mu.Unlock()
}

// CompactionBacklog is the compaction work queued and not yet run on each
// shard.
func (m *Model) CompactionBacklog() []time.Duration {
	out := make([]time.Duration, len(m.shards))
	for i := range m.shards {
		out[i] = m.CompactionWork(i)
	}
	return out
}

// CompactionWork is the compaction work queued and not yet run on shard.
func (m *Model) CompactionWork(shard int) time.Duration {
	s := m.shard(shard)
	s.mu.Lock()
	defer s.mu.Unlock()
	m.advance(s, m.now())
	return time.Duration(s.bg.g[Compaction].work + s.bg.g[Compaction].inflight)
}
