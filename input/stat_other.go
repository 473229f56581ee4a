//go:build !unix

package input

import "io/fs"

// keyOf names the file behind fi by its resolved path where the system has
// no inode numbers.
func keyOf(fi fs.FileInfo, canon string) string { return "path:" + canon }

func readable(path string) error { return nil }
