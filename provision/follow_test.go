package provision

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FollowFile behaves like tail -F: waits for the file, reads from the start,
// follows appends, and starts over when the file is replaced.
func TestFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node-1.log")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc := FollowFile(ctx, path, 10*time.Millisecond)
	defer rc.Close()
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(rc)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(want string) {
		t.Helper()
		select {
		case got := <-lines:
			if got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no line %q", want)
		}
	}
	time.Sleep(50 * time.Millisecond) // the file does not exist yet
	os.WriteFile(path, []byte("one\n"), 0o644)
	next("one")
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("two\n")
	f.Close()
	next("two")
	tmp := path + ".new"
	os.WriteFile(tmp, []byte("fresh\n"), 0o644)
	os.Rename(tmp, path)
	next("fresh")
	cancel()
	select {
	case _, ok := <-lines:
		if ok {
			t.Fatal("more lines after cancel")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reader did not end after cancel")
	}
}
