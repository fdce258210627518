package schedlag

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
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
