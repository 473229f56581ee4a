package decode

import (
	"math/rand/v2"
	"testing"

	"mcptrace/schema"
)

// hashesSerial is hashes as it was written first: each FNV-1a chain over
// its whole input, one after the other.
func hashesSerial(b []byte, method string, params tok, hash *[6]tok) (uint64, uint64) {
	ph := fnvString(fnvOffset, method)
	ph = fnvByte(ph, 0)
	if params.kind.Exists() {
		ph = fnvBytes(ph, b[params.start:params.end])
	}
	ch := fnvString(fnvOffset, method)
	for _, t := range hash {
		ch = fnvByte(ch, 0)
		if t.kind.Exists() && params.kind == schema.JSONObject {
			ch = fnvBytes(ch, b[t.start:t.end])
		}
	}
	return ph, ch
}

// TestHashesMatchSerial: hashes, which feeds the two chains side by side,
// gives what one chain after the other gives, for params and members of
// every kind and length (members longer and shorter than params, absent,
// empty, overlapping).
func TestHashesMatchSerial(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 23))
	kinds := []schema.JSONKind{schema.JSONAbsent, schema.JSONObject, schema.JSONString, schema.JSONArray, schema.JSONNumber}
	span := func(n int) (int, int) {
		i := rng.IntN(n + 1)
		return i, i + rng.IntN(n-i+1)
	}
	for range 20000 {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		var params tok
		params.kind = kinds[rng.IntN(len(kinds))]
		if rng.IntN(3) > 0 {
			params.kind = schema.JSONObject
		}
		params.start, params.end = span(len(b))
		var hash [6]tok
		for i := range hash {
			hash[i].kind = kinds[rng.IntN(len(kinds))]
			hash[i].start, hash[i].end = span(len(b))
		}
		method := string(b[:rng.IntN(len(b)+1)])
		ph, ch := hashes(b, method, params, &hash)
		wph, wch := hashesSerial(b, method, params, &hash)
		if ph != wph || ch != wch {
			t.Fatalf("params %+v, members %+v: hashes %x %x, serially %x %x", params, hash, ph, ch, wph, wch)
		}
	}
}

// BenchmarkHashes hashes a tools/call request's params whose arguments are
// most of it, as wire logs have them.
func BenchmarkHashes(b *testing.B) {
	args := `{"query":"select id, name, email from customers where created_at > now() - interval '7 days' order by id","limit":100,"format":"json"}`
	body := []byte(`{"name":"run_query","arguments":` + args + `}`)
	params := tok{kind: schema.JSONObject, start: 0, end: len(body)}
	var hash [6]tok
	hash[0] = tok{kind: schema.JSONString, start: 8, end: 19}
	hash[2] = tok{kind: schema.JSONObject, start: 32, end: 32 + len(args)}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		hashes(body, "tools/call", params, &hash)
	}
}
