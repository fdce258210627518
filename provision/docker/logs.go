package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// logFollower copies one container's output into its node log file. It is
// ours rather than testcontainers' log consumer because that one lives only
// as long as the context of the call that started the container: a node
// added by a nemesis step (whose context ends with the step) would log
// nothing afterwards.
type logFollower struct {
	f *os.File
	// onLine sees every line of the container's output; onEnd is called
	// when the output ends by itself (the container stopped).
	onLine func(string)
	onEnd  func()

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func newLogFollower(f *os.File) *logFollower { return &logFollower{f: f} }

// start follows the container's output from since (zero: from the
// beginning) until the container stops or stop is called. A follower that
// is already running is stopped first.
func (lf *logFollower) start(parent context.Context, id string, since time.Time, logf func(string, ...any)) {
	lf.stop(0)
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	lf.mu.Lock()
	lf.cancel, lf.done = cancel, done
	lf.mu.Unlock()
	go func() {
		defer close(done)
		defer cancel()
		err := lf.copy(ctx, id, since)
		if err != nil && ctx.Err() == nil {
			logf("docker: following the log of %.12s: %v", id, err)
		}
		if err == nil && ctx.Err() == nil && lf.onEnd != nil {
			lf.onEnd()
		}
	}()
}

func (lf *logFollower) copy(ctx context.Context, id string, since time.Time) error {
	c, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("connecting to the engine: %w", err)
	}
	defer c.Close()
	opts := client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Follow: true}
	if !since.IsZero() {
		opts.Since = fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond())
	}
	rc, err := c.ContainerLogs(ctx, id, opts)
	if err != nil {
		return err
	}
	defer rc.Close()
	// A write after close (teardown) fails and ends the copy.
	var w io.Writer = lf.f
	if lf.onLine != nil {
		w = &lineTee{w: lf.f, line: lf.onLine}
	}
	_, err = stdcopy.StdCopy(w, w, rc) // ends at EOF, when the container stops
	return err
}

// lineTee writes through to w and hands each complete line to line.
type lineTee struct {
	w    io.Writer
	line func(string)
	buf  []byte
}

func (t *lineTee) Write(b []byte) (int, error) {
	n, err := t.w.Write(b)
	t.buf = append(t.buf, b[:n]...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			break
		}
		t.line(string(bytes.TrimRight(t.buf[:i], "\r")))
		t.buf = t.buf[i+1:]
	}
	if len(t.buf) > 64<<10 { // a runaway line: hand it over as it is
		t.line(string(t.buf))
		t.buf = nil
	}
	return n, err
}

// stop ends the follower, after letting it drain for up to grace (the
// container may have stopped already, in which case it ends by itself).
func (lf *logFollower) stop(grace time.Duration) {
	lf.mu.Lock()
	cancel, done := lf.cancel, lf.done
	lf.cancel, lf.done = nil, nil
	lf.mu.Unlock()
	if cancel == nil {
		return
	}
	select {
	case <-done:
	case <-time.After(grace):
	}
	cancel()
	<-done
}

// close stops the follower and closes the file.
func (lf *logFollower) close(grace time.Duration) {
	lf.stop(grace)
	lf.mu.Lock()
	defer lf.mu.Unlock()
	_ = lf.f.Close()
}
