package aws

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// journalArgs follow scylla-server's journal from its first entry (-n all:
// `journalctl -f` alone starts at the last 10) as JSON, which keeps the
// syslog priority: on the machine image ScyllaDB logs to syslog only
// (--log-to-syslog 1 --log-to-stdout 0, scylladb
// dist/common/sysconfig/scylla-server) and seastar's syslog message carries
// no level text (seastar src/util/log.cc, logger::do_log), so `-o cat`
// would lose every ERROR.
var journalArgs = []string{"journalctl", "-u", "scylla-server", "-f", "-n", "all", "--no-pager", "-o", "json"}

// syslog priorities back to ScyllaDB's level names.
var levelOf = map[string]string{"0": "ERROR", "1": "ERROR", "2": "ERROR", "3": "ERROR", "4": "WARN", "5": "INFO", "6": "INFO", "7": "DEBUG"}

type journalEntry struct {
	Realtime string `json:"__REALTIME_TIMESTAMP"`
	Priority string `json:"PRIORITY"`
	Message  any    `json:"MESSAGE"` // a string, or an array of bytes when not valid UTF-8
}

// JournalToScyllaLog turns `journalctl -o json` output into ScyllaDB's own
// log format ("INFO  2026-11-30 12:00:00,123 [shard 0:main] init - msg"),
// the format the log watcher parses: the level from PRIORITY, the time from
// __REALTIME_TIMESTAMP, then the syslog message. Lines that are not journal
// JSON pass through unchanged.
func JournalToScyllaLog(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	bw := bufio.NewWriter(w)
	for sc.Scan() {
		line := sc.Text()
		var e journalEntry
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			bw.WriteString(line + "\n")
		} else {
			bw.WriteString(scyllaLine(e))
		}
		// One flush per entry: the watcher acts on lines as they come.
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

func scyllaLine(e journalEntry) string {
	lvl := levelOf[e.Priority]
	if lvl == "" {
		lvl = "INFO"
	}
	t := time.Now()
	if us, err := strconv.ParseInt(e.Realtime, 10, 64); err == nil {
		t = time.UnixMicro(us)
	}
	var msg string
	switch m := e.Message.(type) {
	case string:
		msg = m
	case []any:
		b := make([]byte, 0, len(m))
		for _, x := range m {
			if f, ok := x.(float64); ok {
				b = append(b, byte(f))
			}
		}
		msg = string(b)
	}
	if !strings.HasPrefix(msg, " ") {
		msg = " " + msg
	}
	return fmt.Sprintf("%-5s %s%s\n", lvl, t.Format("2006-01-02 15:04:05,000"), strings.TrimRight(msg, "\n"))
}
