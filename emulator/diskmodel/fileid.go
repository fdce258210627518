//go:build unix

package diskmodel

import (
	"io/fs"
	"syscall"
)

// fileID identifies a file across its hard links.
type fileID struct{ dev, ino uint64 }

// fileIDOf is the file's device and inode, where the system has them.
func fileIDOf(info fs.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink <= 1 {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}
