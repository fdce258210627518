package schedlag

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// A process that is stopped (SIGSTOP, then SIGCONT 300 ms later) was not
// running while its timer was due: the meter counts the pause, once.
func TestMeterCountsAPauseOfTheProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("stops itself with kill(1)")
	}
	m := Start(0)
	defer m.Stop()
	time.Sleep(100 * time.Millisecond)
	before := m.Lag()
	pid := strconv.Itoa(os.Getpid())
	// The helper outlives our pause: it stops us, waits, and resumes us.
	if err := exec.Command("sh", "-c", "kill -STOP "+pid+"; sleep 0.3; kill -CONT "+pid).Run(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the tick after the pause
	got := m.Lag() - before
	if got < 250*time.Millisecond || got > 600*time.Millisecond {
		t.Errorf("lag over a 300 ms pause: %v, want about 300 ms", got)
	}
	m.Stop()
	if after := m.Lag(); after < got {
		t.Errorf("a stopped meter lost its total: %v < %v", after, got)
	}
}

// The Go timer's own granularity is not lag; lateness beyond it is.
func TestExcess(t *testing.T) {
	for _, c := range []struct{ late, want time.Duration }{
		{0, 0}, {time.Millisecond, 0}, {Slack, 0}, {Slack + 5*time.Millisecond, 5 * time.Millisecond}, {-time.Millisecond, 0},
	} {
		if got := Excess(c.late); got != c.want {
			t.Errorf("Excess(%v) = %v, want %v", c.late, got, c.want)
		}
	}
}

// Meters of one period share one timer (one goroutine for all, not one
// each), and each keeps its own holds: a meter held for 300 ms is late by
// the hold on its first tick after it, the others are not.
func TestMetersShareATimerAndKeepTheirHolds(t *testing.T) {
	const period = 7 * time.Millisecond // a period no other test uses
	before := runtime.NumGoroutine()
	var held atomic.Bool
	var heldLate, freeLate atomic.Int64
	record := func(to *atomic.Int64) func(time.Duration) {
		return func(late time.Duration) {
			if int64(late) > to.Load() {
				to.Store(int64(late))
			}
		}
	}
	var meters []*Meter
	meters = append(meters, StartHeld(period, record(&heldLate), held.Load))
	for range 9 {
		meters = append(meters, StartHeld(period, record(&freeLate), nil))
	}
	if n := runtime.NumGoroutine() - before; n > 1 {
		t.Errorf("10 meters of one period started %d goroutines, want 1", n)
	}
	time.Sleep(50 * time.Millisecond)
	held.Store(true)
	time.Sleep(300 * time.Millisecond)
	held.Store(false)
	time.Sleep(50 * time.Millisecond)
	for _, m := range meters {
		m.Stop()
	}
	if got := time.Duration(heldLate.Load()); got < 250*time.Millisecond || got > 600*time.Millisecond {
		t.Errorf("a meter held for 300 ms was at most %v late, want about 300 ms", got)
	}
	if got := time.Duration(freeLate.Load()); got > 100*time.Millisecond {
		t.Errorf("meters not held were up to %v late while another was held", got)
	}
	if lag := meters[0].Lag(); lag < 250*time.Millisecond {
		t.Errorf("the held meter's lag is %v, want the hold's 300 ms", lag)
	}
	time.Sleep(3 * period)
	if n := runtime.NumGoroutine() - before; n > 0 {
		t.Errorf("%d goroutines left once every meter stopped", n)
	}
}
