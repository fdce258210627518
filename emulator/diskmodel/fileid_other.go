//go:build !unix

package diskmodel

import "io/fs"

type fileID struct{}

// fileIDOf has no inode to read here: every file counts.
func fileIDOf(fs.FileInfo) (fileID, bool) { return fileID{}, false }
