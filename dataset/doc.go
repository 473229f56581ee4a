// Package dataset owns mcptrace's on-disk dataset: where files go, the
// manifest that says which source wrote which file, the lock, and the
// commit that makes a run's output appear at once or not at all.
package dataset
