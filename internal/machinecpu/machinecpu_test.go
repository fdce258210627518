package machinecpu

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// A busy loop on every CPU shows as a busy machine; the counters only grow.
func TestBusyLoopsOnEveryCPUShowAsBusy(t *testing.T) {
	a, err := Read()
	if err != nil {
		t.Skipf("no /proc/stat here: %v", err)
	}
	if a.All <= 0 || a.Busy <= 0 || a.Busy > a.All {
		t.Fatalf("implausible CPU times %+v", a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	for range runtime.NumCPU() {
		go func() {
			defer func() { done <- struct{}{} }()
			for ctx.Err() == nil {
			}
		}()
	}
	for range runtime.NumCPU() {
		<-done
	}
	b, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	// Every CPU spun for the whole window, so only other processes'
	// idle-time bookkeeping at its edges can make it less than all.
	if p := BusyPct(a, b); p < 90 {
		t.Errorf("busy %.1f%% of the CPU time while every CPU spun", p)
	}
	if BusyPct(b, b) != 0 {
		t.Errorf("no time passed, yet busy %.1f%%", BusyPct(b, b))
	}
}
