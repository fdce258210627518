package provision

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// FollowFile streams a log file from its start and keeps following it, like
// `tail -F`, until ctx ends or the reader is closed. The file may not exist
// yet (a node that has not started): it is waited for.
func FollowFile(ctx context.Context, path string) (io.ReadCloser, error) {
	if path == "" {
		return nil, errors.New("follow: no log path")
	}
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	go func() {
		defer cancel()
		var f *os.File
		for f == nil {
			var err error
			f, err = os.Open(path)
			if err != nil {
				if !errors.Is(err, os.ErrNotExist) {
					pw.CloseWithError(fmt.Errorf("follow %s: %w", path, err))
					return
				}
				select {
				case <-ctx.Done():
					pw.Close()
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
		defer f.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				if _, werr := pw.Write(buf[:n]); werr != nil {
					return // reader closed
				}
			}
			if err == io.EOF {
				select {
				case <-ctx.Done():
					pw.Close()
					return
				case <-time.After(100 * time.Millisecond):
				}
				continue
			}
			if err != nil {
				pw.CloseWithError(fmt.Errorf("follow %s: %w", path, err))
				return
			}
		}
	}()
	return &followReader{PipeReader: pr, cancel: cancel}, nil
}

type followReader struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (r *followReader) Close() error {
	r.cancel()
	return r.PipeReader.Close()
}
