package provision

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// FollowFile is how every backend streams a node's log: like `tail -F` it
// waits for the file, reads from its start, follows appends and starts over
// when the file is replaced or truncated, until ctx ends or the reader is
// closed.
func FollowFile(ctx context.Context, path string, poll time.Duration) io.ReadCloser {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(ctx, func() { pw.Close() })
	go func() {
		defer stop()
		defer cancel()
		var f *os.File
		var off int64
		defer func() {
			if f != nil {
				f.Close()
			}
		}()
		buf := make([]byte, 64<<10)
		for {
			if f == nil {
				var err error
				f, err = os.Open(path)
				if err != nil {
					f = nil
					if !errors.Is(err, os.ErrNotExist) {
						pw.CloseWithError(fmt.Errorf("following %s: %w", path, err))
						return
					}
					if !sleepCtx(ctx, poll) {
						pw.Close()
						return
					}
					continue
				}
				off = 0
			}
			k, err := f.Read(buf)
			if k > 0 {
				if _, werr := pw.Write(buf[:k]); werr != nil {
					return // reader closed or ctx ended
				}
				off += int64(k)
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				pw.CloseWithError(fmt.Errorf("reading %s: %w", path, err))
				return
			}
			// At the end: reopen if the file was replaced or truncated.
			if st, serr := os.Stat(path); serr == nil {
				if fst, ferr := f.Stat(); ferr == nil && (!os.SameFile(st, fst) || st.Size() < off) {
					f.Close()
					f = nil
					continue
				}
			}
			if !sleepCtx(ctx, poll) {
				pw.Close()
				return
			}
		}
	}()
	return &follower{PipeReader: pr, cancel: cancel}
}

type follower struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (f *follower) Close() error {
	f.cancel()
	return f.PipeReader.Close()
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
