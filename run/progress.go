package run

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/elasticity-dev/elasticity/results"
)

// reporter prints what the run is doing and waiting for, and records it as
// progress events (throttled, so that a long drain does not flood
// events.jsonl).
type reporter struct {
	mu      sync.Mutex
	out     io.Writer
	log     io.Writer // run log file (may be nil)
	start   time.Time
	emit    func(results.Event)
	lastEvt map[results.Phase]time.Time
	every   time.Duration
}

func newReporter(out, log io.Writer, emit func(results.Event)) *reporter {
	if out == nil {
		out = io.Discard
	}
	return &reporter{out: out, log: log, start: time.Now(), emit: emit, lastEvt: map[results.Phase]time.Time{}, every: 2 * time.Second}
}

func (r *reporter) stamp() string {
	return fmt.Sprintf("[%s %7s]", time.Now().UTC().Format("15:04:05"), time.Since(r.start).Round(time.Second))
}

// Logf prints one line to the terminal and the run log.
func (r *reporter) Logf(format string, args ...any) {
	line := fmt.Sprintf("%s %s\n", r.stamp(), fmt.Sprintf(format, args...))
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprint(r.out, line)
	if r.log != nil {
		fmt.Fprint(r.log, line)
	}
}

// Progress prints what a phase is waiting for and records a progress event.
func (r *reporter) Progress(phase results.Phase, msg string) {
	r.Logf("%s: %s", phase, msg)
	r.event(phase, msg)
}

// event records a progress event, at most one per phase every few seconds.
func (r *reporter) event(phase results.Phase, msg string) {
	r.mu.Lock()
	last := r.lastEvt[phase]
	now := time.Now()
	emit := now.Sub(last) >= r.every
	if emit {
		r.lastEvt[phase] = now
	}
	r.mu.Unlock()
	if emit && r.emit != nil {
		r.emit(results.Event{Type: results.EventProgress, Phase: phase, Message: msg})
	}
}

// isTTY reports whether the terminal output is an interactive terminal.
func (r *reporter) isTTY() bool {
	f, ok := r.out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// bar returns a progress bar on an interactive terminal, nil otherwise
// (plain periodic lines are printed instead).
func (r *reporter) bar(max int, desc string) *progressbar.ProgressBar {
	if !r.isTTY() {
		return nil
	}
	return progressbar.NewOptions(max, progressbar.OptionSetWriter(r.out), progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
}
