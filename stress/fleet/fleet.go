package fleet

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/elasticity-dev/elasticity/provision"
	"github.com/elasticity-dev/elasticity/results"
	"github.com/elasticity-dev/elasticity/stress"
)

// Options configure a Fleet.
type Options struct {
	Loaders []provision.Loader
	Shell   Shell
	// Binary is the elasticity executable on this machine. Remote loaders get
	// a copy (Install); local ones run it in place.
	Binary string
	// RemotePath is where Install puts the binary on remote loaders;
	// default /tmp/elasticity/elasticity.
	RemotePath string
	// Dir receives loaders/<name>.jsonl (each loader's own records) and
	// loaders/<name>.log (its console); empty keeps nothing.
	Dir string
	// Interval is the loaders' measurement interval, which merged records
	// are aligned on; default 1 s.
	Interval time.Duration
	// Grace is how long interrupted loaders get to flush their last
	// records before they are killed; default 15 s.
	Grace time.Duration
	// MaxSkew is how long a merged interval waits for a loader that has not
	// reported it yet; default 5 s. Records that arrive later are merged
	// into a record of their own for the same interval.
	MaxSkew time.Duration
	Logf    func(format string, args ...any)
}

// Fleet runs `elasticity stress` on every loader at once.
type Fleet struct {
	o Options
}

// New checks the options and fills in defaults.
func New(o Options) (*Fleet, error) {
	if len(o.Loaders) == 0 {
		return nil, errors.New("fleet: no loaders")
	}
	if o.Shell == nil {
		return nil, errors.New("fleet: no shell to reach the loaders")
	}
	if o.Binary == "" {
		return nil, errors.New("fleet: no elasticity binary to run on the loaders")
	}
	if o.RemotePath == "" {
		o.RemotePath = "/tmp/elasticity/elasticity"
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 15 * time.Second
	}
	if o.MaxSkew <= 0 {
		o.MaxSkew = 5 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return &Fleet{o: o}, nil
}

// Len is the number of loaders.
func (f *Fleet) Len() int { return len(f.o.Loaders) }

func (f *Fleet) binaryOn(l provision.Loader) string {
	if l.Local {
		return f.o.Binary
	}
	return f.o.RemotePath
}

// Install copies the binary to every remote loader, in parallel.
func (f *Fleet) Install(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(f.o.Loaders))
	for i, l := range f.o.Loaders {
		if l.Local {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			f.o.Logf("fleet: copying %s to %s (%s):%s", f.o.Binary, l.Name, l.Address, f.o.RemotePath)
			if err := f.o.Shell.Upload(ctx, l.Address, f.o.Binary, f.o.RemotePath); err != nil {
				errs[i] = fmt.Errorf("installing elasticity on %s (%s): %w", l.Name, l.Address, err)
				return
			}
			f.o.Logf("fleet: %s ready after %s", l.Name, time.Since(start).Round(time.Millisecond))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Totals are what one loader reported.
type Totals struct {
	Loader  string
	Ops     int64 // successful operations
	Errors  int64
	Dropped int64
}

// Attempted is every operation that was sent (successful or failed).
func (t Totals) Attempted() int64 { return t.Ops + t.Errors }

// Stream runs job(i) (`elasticity stress` with the job's flags) on loader
// i, for every loader at once, with
// its records on standard output (--out - is added), and passes them to sink
// merged by interval: one record per interval and operation, histograms
// added (results.MergeLoaders), Source "merged". It returns when every loader
// has exited, or when ctx ends: then the loaders are interrupted and given
// Grace to flush their last intervals. A loader that fails (other than by
// that interrupt) is an error naming it.
func (f *Fleet) Stream(ctx context.Context, job func(i int) stress.Job, sink func(results.LatencyRecord)) ([]Totals, error) {
	m := newMerger(len(f.o.Loaders), f.o.Interval, f.o.MaxSkew, sink)
	totals := make([]Totals, len(f.o.Loaders))
	raw := make([]*results.JSONLWriter, len(f.o.Loaders))
	if err := f.loaderDir(); err != nil {
		return nil, err
	}
	for i, l := range f.o.Loaders {
		totals[i].Loader = l.Name
		if f.o.Dir != "" {
			w, err := results.OpenJSONL(filepath.Join(f.o.Dir, "loaders", l.Name+".jsonl"))
			if err != nil {
				return nil, fmt.Errorf("fleet: %w", err)
			}
			raw[i] = w
			defer w.Close()
		}
	}
	stop := make(chan struct{})
	tickDone := make(chan struct{})
	go func() {
		defer close(tickDone)
		t := time.NewTicker(f.o.Interval / 2)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				m.flushOlder(now)
			}
		}
	}()
	err := f.each(ctx, func(i int) []string { return append(job(i).Args(), "--out", "-") }, func(i int, stdout io.Reader) error {
		name := f.o.Loaders[i].Name
		defer m.loaderDone(i)
		return results.DecodeJSONL(stdout, name+" standard output", func(line int, r *results.LatencyRecord) error {
			if raw[i] != nil {
				_ = raw[i].Write(r) // the merged stream is what counts; a lost copy is not fatal
			}
			totals[i].Ops += r.Count
			totals[i].Dropped += r.Dropped
			for _, n := range r.Errors {
				totals[i].Errors += n
			}
			return m.add(i, *r)
		})
	})
	close(stop)
	<-tickDone
	m.loaderDone(-1)
	if merr := m.err(); merr != nil {
		err = errors.Join(err, merr)
	}
	return totals, err
}

// Calibrate runs job(i) as a calibration alone (CalibrateOnly) on every loader at once
// (they probe the cluster together, as they will load it) and returns each
// loader's calibration.
func (f *Fleet) Calibrate(ctx context.Context, job func(i int) stress.Job) ([]stress.Calibration, error) {
	out := make([]stress.Calibration, len(f.o.Loaders))
	args := func(i int) []string {
		j := job(i)
		j.CalibrateOnly = true
		return j.Args()
	}
	err := f.each(ctx, args, func(i int, stdout io.Reader) error {
		b, err := io.ReadAll(io.LimitReader(stdout, 1<<20))
		if err != nil {
			return err
		}
		if len(strings.TrimSpace(string(b))) == 0 {
			return nil // interrupted before it finished; Wait says why
		}
		if err := json.Unmarshal(b, &out[i]); err != nil {
			return fmt.Errorf("reading the calibration of %s: %w (got %.200q)", f.o.Loaders[i].Name, err, b)
		}
		return nil
	})
	return out, err
}

// each starts the command on every loader, hands its standard output to
// read, copies its standard error into the log, and waits.
func (f *Fleet) each(ctx context.Context, args func(i int) []string, read func(i int, stdout io.Reader) error) error {
	// The processes outlive ctx by Grace: ctx ending interrupts them, and
	// only killCtx ending kills them.
	killCtx, kill := context.WithCancel(context.WithoutCancel(ctx))
	defer kill()
	var wg sync.WaitGroup
	errs := make([]error, len(f.o.Loaders))
	procs := make([]Process, len(f.o.Loaders))
	for i, l := range f.o.Loaders {
		argv := append([]string{f.binaryOn(l), "stress"}, args(i)...)
		pr, pw := io.Pipe()
		logw := f.logWriter(l)
		p, err := f.o.Shell.Start(killCtx, l.Address, argv, pw, logw)
		if err != nil {
			pw.Close()
			errs[i] = fmt.Errorf("starting stress on %s: %w", l.Name, err)
			continue
		}
		procs[i] = p
		f.o.Logf("fleet: %s: %s", l.Name, logArgs(argv[1:]))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rerr error
			readDone := make(chan struct{})
			go func() {
				defer close(readDone)
				rerr = read(i, pr)
				// Keep draining so that the loader never blocks on a full pipe.
				_, _ = io.Copy(io.Discard, pr)
			}()
			werr := p.Wait()
			pw.Close()
			<-readDone
			if c, ok := logw.(io.Closer); ok {
				c.Close()
			}
			interrupted := ctx.Err() != nil
			switch {
			case werr != nil && !(interrupted && exitedByInterrupt(werr)):
				errs[i] = fmt.Errorf("stress on %s: %w", l.Name, werr)
			case rerr != nil:
				errs[i] = fmt.Errorf("stress on %s: %w", l.Name, rerr)
			}
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	select {
	case <-allDone:
	case <-ctx.Done():
		f.o.Logf("fleet: interrupting %d loader(s); waiting up to %s for their last records", len(procs), f.o.Grace)
		for _, p := range procs {
			if p != nil {
				_ = p.Interrupt()
			}
		}
		select {
		case <-allDone:
		case <-time.After(f.o.Grace):
			f.o.Logf("fleet: loaders did not stop within %s; killing them", f.o.Grace)
			kill()
			<-allDone
		}
	}
	return errors.Join(errs...)
}

// exitedByInterrupt: the loader ended because it was told to (status 130 of
// `elasticity stress`, or 0 when it had just finished).
func exitedByInterrupt(err error) bool {
	var st interface{ ExitStatus() int }
	if errors.As(err, &st) {
		return st.ExitStatus() == 130 || st.ExitStatus() == 0
	}
	return false
}

// loaderDir creates Dir/loaders, where each loader's records and console go.
func (f *Fleet) loaderDir() error {
	if f.o.Dir == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(f.o.Dir, "loaders"), 0o755); err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	return nil
}

// logWriter keeps a loader's console in loaders/<name>.log and logs every
// line that is not one of its per-second progress lines.
func (f *Fleet) logWriter(l provision.Loader) io.Writer {
	var file *os.File
	if f.o.Dir != "" && f.loaderDir() == nil {
		file, _ = os.OpenFile(filepath.Join(f.o.Dir, "loaders", l.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if file != nil {
				fmt.Fprintln(file, line)
			}
			if important(line) {
				f.o.Logf("fleet: %s: %s", l.Name, line)
			}
		}
		_, _ = io.Copy(io.Discard, pr)
		if file != nil {
			file.Close()
		}
	}()
	return &lineLog{w: pw, done: done}
}

// important lines of a loader's console: warnings and errors, not the
// per-interval table.
func important(line string) bool {
	l := strings.ToLower(strings.TrimSpace(line))
	if strings.HasPrefix(l, "elapsed ") || strings.HasPrefix(l, "op ") {
		return false // table headers (their "errors" column is not an error)
	}
	for _, k := range []string{"warn", "error", "fail", "calibrated", "fill:"} {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}

type lineLog struct {
	w    *io.PipeWriter
	done chan struct{}
	once sync.Once
}

func (l *lineLog) Write(b []byte) (int, error) { return l.w.Write(b) }

func (l *lineLog) Close() error {
	l.once.Do(func() { l.w.Close(); <-l.done })
	return nil
}

// merger collects the loaders' records by interval and passes on one merged
// record per interval and operation once every loader has moved past it (or
// MaxSkew has passed).
type merger struct {
	mu       sync.Mutex
	n        int
	interval time.Duration
	maxSkew  time.Duration
	sink     func(results.LatencyRecord)
	pending  map[time.Time][]results.LatencyRecord
	seen     map[time.Time]time.Time // when the interval's first record arrived
	latest   []time.Time             // per loader: the newest interval it reported
	done     []bool
	failure  error
}

func newMerger(n int, interval, maxSkew time.Duration, sink func(results.LatencyRecord)) *merger {
	return &merger{n: n, interval: interval, maxSkew: maxSkew, sink: sink,
		pending: map[time.Time][]results.LatencyRecord{}, seen: map[time.Time]time.Time{},
		latest: make([]time.Time, n), done: make([]bool, n)}
}

func (m *merger) add(i int, r results.LatencyRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := r.Start.Truncate(m.interval)
	if _, ok := m.seen[k]; !ok {
		m.seen[k] = time.Now()
	}
	m.pending[k] = append(m.pending[k], r)
	if k.After(m.latest[i]) {
		m.latest[i] = k
	}
	m.emitLocked(time.Now(), false)
	return m.failure
}

// loaderDone marks loader i finished (-1: all); its missing intervals are
// no longer waited for.
func (m *merger) loaderDone(i int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for j := range m.done {
		if i < 0 || i == j {
			m.done[j] = true
		}
	}
	m.emitLocked(time.Now(), i < 0)
}

func (m *merger) flushOlder(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.emitLocked(now, false)
}

func (m *merger) err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failure
}

// emitLocked passes on, in time order, every interval that is complete:
// every loader still running has reported a later one, or it waited MaxSkew.
func (m *merger) emitLocked(now time.Time, all bool) {
	keys := make([]time.Time, 0, len(m.pending))
	for k := range m.pending {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a].Before(keys[b]) })
	for _, k := range keys {
		complete := all || now.Sub(m.seen[k]) >= m.maxSkew
		if !complete {
			complete = true
			for j := range m.latest {
				if !m.done[j] && !m.latest[j].After(k) {
					complete = false
					break
				}
			}
		}
		if !complete {
			break // later intervals wait too: records go out in time order
		}
		recs := m.pending[k]
		delete(m.pending, k)
		delete(m.seen, k)
		merged, err := results.MergeLoaders([][]results.LatencyRecord{recs}, m.interval)
		if err != nil {
			if m.failure == nil {
				m.failure = fmt.Errorf("fleet: %w", err)
			}
			continue
		}
		for _, r := range merged {
			m.sink(r)
		}
	}
}

// logArgs is a command line for the log: a long argument (a workload
// model's spec may hold a whole profile) is cut short.
func logArgs(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if len(a) > 160 {
			a = fmt.Sprintf("%s…(%d bytes)", a[:120], len(a))
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
