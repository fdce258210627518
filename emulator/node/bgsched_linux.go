package node

import (
	"runtime"
	"syscall"
)

// The main goroutine keeps the main thread (LockOSThread in an init
// function: package runtime's documentation), so no other goroutine runs
// there and background work, which locks its thread for good, never
// starts on the one thread Go cannot end. Commands that run no node give
// the thread back (cmd/elasticity's root command).
func init() { runtime.LockOSThread() }

// lowerThreadPriority locks the calling goroutine to its thread, for
// good (the thread ends with the goroutine), and raises the thread's nice
// value to nice. A thread may always lower its own priority; raising it
// back would need CAP_SYS_NICE, so a nice already higher stays.
//
// Never on the main thread (see init): Go cannot end it, and would park
// it for good when the goroutine exits (runtime/proc.go mexit).
func lowerThreadPriority(nice int) {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	if tid == syscall.Getpid() {
		runtime.UnlockOSThread()
		return
	}
	cur, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	// The raw getpriority system call returns 20 - nice.
	if err == nil && 20-cur >= nice {
		return
	}
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
	if onLowered != nil {
		if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil {
			onLowered(20 - p)
		}
	}
}
