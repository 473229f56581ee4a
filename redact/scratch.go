package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"sync"
	"unsafe"
)

// scratch is the reusable state of one goroutine: the buffers of the
// argument hash and shape, and an HMAC already keyed. The package's
// functions take one from a pool; a Worker keeps its own.
type scratch struct {
	json    jsonScratch
	macFor  *Pseudonymizer
	macHash hash.Hash
	sum     [sha256.Size]byte

	tally    tally
	masks    memoTable // MaskWith of short texts
	pseuds   memoTable // pseudonyms under pseudFor
	pseudFor *Pseudonymizer
	shapes   memoTable // argument shapes, one string each
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(sc *scratch) {
	sc.json.trim()
	scratchPool.Put(sc)
}

// pseudonymOf is p.Pseudonym(v) with sc's HMAC.
func (sc *scratch) pseudonymOf(p *Pseudonymizer, v string) string {
	m := sc.mac(p)
	m.Write(unsafe.Slice(unsafe.StringData(v), len(v)))
	return p.format(m.Sum(sc.sum[:0]))
}

// mac returns an HMAC-SHA256 under p's key, reset.
func (sc *scratch) mac(p *Pseudonymizer) hash.Hash {
	if sc.macFor != p || sc.macHash == nil {
		sc.macHash = hmac.New(sha256.New, p.key)
		sc.macFor = p
	} else {
		sc.macHash.Reset()
	}
	return sc.macHash
}
