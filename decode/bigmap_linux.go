package decode

import "syscall"

// mapBig reserves n bytes of anonymous memory outside the Go heap for one
// long line: pages cost memory only once written, so reserving the line
// limit costs what the line takes, the line is gathered where it stays (no
// chunks to join, no copy), and unmapping gives its memory back to the
// system at once rather than after a collection (the heap would otherwise
// also grow its goal by the line's size). ok is false when the reservation
// fails: the caller then gathers the line in the heap.
func mapBig(n int) (b []byte, unmap func(), ok bool) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, nil, false
	}
	return b[:0], func() { syscall.Munmap(b) }, true
}
