package capacity

import (
	"fmt"
	"strings"
	"time"
)

// StallMessage formats the message of a Seastar blocked-reactor
// notification, without the log prefix:
//
//	Reactor stalled for 32 ms on shard 1. Backtrace: 0x5a1b2c3 0x5a1b4d5 ...
//
// The node logs it at WARN level with logger "seastar". The backtrace
// addresses are derived from shard and d, so a line is reproducible.
func StallMessage(shard int, d time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Reactor stalled for %d ms on shard %d. Backtrace:", d.Milliseconds(), shard)
	x := uint64(shard)*0x9E3779B97F4A7C15 ^ uint64(d)
	for range 6 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		fmt.Fprintf(&b, " 0x%x", 0x4000000+x%0x2000000)
	}
	return b.String()
}
