package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// within reports whether path lies strictly inside root, after making both
// absolute and resolving root's symlinks.
func within(root, path string) (bool, error) {
	if root == "" || path == "" {
		return false, nil
	}
	r, err := filepath.Abs(root)
	if err != nil {
		return false, fmt.Errorf("resolving %s: %w", root, err)
	}
	if rr, err := filepath.EvalSymlinks(r); err == nil {
		r = rr
	}
	p, err := filepath.Abs(path)
	if err != nil {
		return false, fmt.Errorf("resolving %s: %w", path, err)
	}
	// Resolve the existing part of path so a symlink cannot lead outside.
	if pp, err := filepath.EvalSymlinks(p); err == nil {
		p = pp
	} else if pp, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(pp, filepath.Base(p))
	}
	if r == string(filepath.Separator) {
		return false, nil // a run directory of "/" guards nothing
	}
	rel, err := filepath.Rel(r, p)
	if err != nil {
		return false, nil
	}
	if rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return false, nil
	}
	return true, nil
}

// removeWithin deletes path and everything below it, refusing anything that
// is not strictly inside root (the run directory).
func removeWithin(root, path string) error {
	ok, err := within(root, path)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("refusing to delete %q: not inside the run directory %q", path, root)
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("deleting %s: %w", path, err)
	}
	return nil
}
