//go:build unix

package input

import (
	"fmt"
	"io/fs"
	"syscall"
)

// keyOf names the file behind fi by device and inode, so that a file or
// directory reached twice (through a symlink, a hard link, a second
// spelling) is known to be the same one.
func keyOf(fi fs.FileInfo, canon string) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", uint64(st.Dev), uint64(st.Ino))
	}
	return "path:" + canon
}

// readable checks read permission without opening the file: opening a FIFO
// blocks until a writer comes, and the writer's data would be lost when it
// is closed again.
func readable(path string) error {
	const rOK = 4
	return syscall.Access(path, rOK)
}
