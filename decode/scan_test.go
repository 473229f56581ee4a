package decode

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"mcptrace/internal/jsonstr"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// hostileBodies are JSON-RPC bodies that probe every rule of the one-pass
// reader: repeated and escaped members, every kind where a reader expects
// one, numbers gjson and strconv read differently, surrogates, batches at
// the cap, nesting at the limit, and JSON that is not quite.
var hostileBodies = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"id":2}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","id":"a","method":"tools/call","params":{"name":"x","name":"y"}}`,
	`{"jsonrpc":"2.0","id":1,"method":1,"method":"notifications/x"}`,
	`{"jsonrpc":"2.0","\u0069d":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":"\u0031","result":{"resultType":"input_required","requestState":"s\n1"}}`,
	`{"jsonrpc":"2.\u0030","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad \"limit\"","data":{"x":[1,2]}}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"-32602","message":17}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32602.0,"message":null}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-3.2602e4,"message":[1]}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":{"a":1}}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":9007199254740993,"message":"big"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":123456789012345678901234567890,"message":"huge"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1e400,"message":"inf"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-1e400,"message":"-inf"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":true,"message":"t"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"1.5e3","message":"s"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-0,"message":"z","code":1}}`,
	`{"jsonrpc":"2.0","id":1,"error":"oops"}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	`{"jsonrpc":"2.0","id":1.50,"result":{"protocolVersion":1.50,"serverInfo":{"name":"s","version":2,"name":"t"}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","annotations":{"readOnlyHint":true}},{"name":"b","annotations":{"idempotentHint":"TRUE","readOnlyHint":0}},{"name":""},7,{"name":3,"annotations":{"readOnlyHint":1.5}},{"name":"c","name":"d","annotations":{"readOnlyHint":"t","readOnlyHint":false}}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"tools":{"a":{"name":"x"}}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"n\u0061me":"a"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b\nc"},{"type":"text","text":"d"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":1},{"type":"text","text":"b"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text"},{"type":"text","text":"b"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"te\u0078t","text":"a"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"t\u0079pe":"text","text":"a"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a","type":"image"},{"text":"z","type":"text","text":"y"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":"not an array","isError":"yes","structuredContent":[1]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"error":"x"},"content":[{"type":"text","text":"again"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{}},"requestState":{"k":1}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":5}}`,
	`{"jsonrpc":"2.0","id":1,"result":[1,2]}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"result":{"isError":true},"error":{"code":1,"message":"both"}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"x","n":[1,{"a":null}]},"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"x"},"arguments":{"q":"y"}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":17,"arguments":"s","inputResponses":{},"requestState":"rs"}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"requestState":3.25,"_meta":"m"}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientInfo":"c"}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1,2]}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"p"}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"agent","version":"1.0","name":"other"}}}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":"agent"}}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"n\u0061me":"agent"}}}`,
	`{"jsonrpc":"2.0","id":0,"method":"resources/read","params":{"uri":"file:///x","cursor":"c","ref":{"type":"r"},"argument":{"name":"a"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":"b"}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x\ty","reason":"r"}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.0e2}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":50}}`,
	`{"jsonrpc":"2.0","id":{"a":1},"result":{}}`,
	`{"jsonrpc":"2.0","id":[1],"result":{}}`,
	`{"jsonrpc":"2.0","id":true,"result":{}}`,
	`{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"x"}`,
	`{"jsonrpc":"2.0","id":"\ud800","method":"x"}`,
	`{"jsonrpc":"2.0","id":"\udc00\ud800\u0041","method":"x"}`,
	`{"jsonrpc":"2.0","id":"a\u0000b","method":"x"}`,
	`{"jsonrpc":"2.0","id":"\"\\\/\b\f\n\r\t","method":"m\u00e9thode"}`,
	`{}`, `[]`, `[{}]`, `[1,"a",null,true,{"id":1,"result":{}}]`, `"abc"`, `12`, `-0.5e-3`, `null`, `true`, `false`,
	` {"jsonrpc":"2.0","id":1,"result":{}} `, "\t\r\n{\"id\":1,\"result\":{}}\n",
	"\u00a0{\"id\":1,\"result\":{}}\u00a0",
	`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":1,"result":{},"id":2},{"jsonrpc":"2.0","method":"x","method":"notifications/y"}]`,
	// Not JSON.
	`{"jsonrpc":"2.0","id":1,}`, `{"jsonrpc":"2.0" "id":1}`, `{"id":01}`, `{"id":-}`, `{"id":1.}`, `{"id":1e}`, `{"id":.5}`,
	`{"id":+1}`, `{"id":tru}`, `{"id":nul}`, `{"id":NaN}`, `{"id":"a` + "\x01" + `"}`, `{"id":"\x"}`, `{"id":"\u12"}`,
	`{"id":1}}`, `{"id":1} x`, `[1,]`, `[,1]`, `[1 2]`, `{"a"}`, `{"a":}`, `{1:2}`, `{"a":1,}`, `{"a":1`, `"abc`, `[`, `{`,
	"{\"id\":\"\xff\"}", "{\"id\":\"\xc3\x28\"}", "\xef\xbb\xbf{}",
	"{\"a\":[" + strings.Repeat("[", 600) + strings.Repeat("]", 600) + "]}",
	strings.Repeat("[", 512) + strings.Repeat("]", 512),
	strings.Repeat("[", 513) + strings.Repeat("]", 513),
	strings.Repeat("[", 513),
	`{"x":"` + strings.Repeat("[", 600) + `"}`,
	"[" + strings.Repeat("0,", MaxBatch) + "0]",
	"[" + strings.Repeat("0,", MaxBatch-1) + "0]",
	"[" + strings.Repeat(`{"jsonrpc":"2.0","method":"n"},`, MaxBatch) + `1,]`,
}

// sampleLines are the lines of every wire log among the samples.
func sampleLines(tb testing.TB) [][]byte {
	tb.Helper()
	var lines [][]byte
	err := filepath.Walk("../samples", func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".ndjson") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) > 0 {
				lines = append(lines, l)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(lines) < 100 {
		tb.Fatalf("only %d sample lines", len(lines))
	}
	return lines
}

// sampleBodies are the bodies, stream events and stdio frames of the
// sample wire logs.
func sampleBodies(tb testing.TB) [][]byte {
	var out [][]byte
	for _, l := range sampleLines(tb) {
		for _, path := range []string{"http.request.body", "stdio.line"} {
			if v := gjson.GetBytes(l, path); v.Exists() {
				out = append(out, []byte(v.String()))
			}
		}
		if v := gjson.GetBytes(l, "http.response.body"); v.Exists() {
			out = append(out, []byte(v.String()))
			for _, e := range ParseSSE(v.String(), true) {
				out = append(out, []byte(e.Data))
			}
		}
	}
	return out
}

// mutations are versions of b cut short, and with bytes changed, at a
// spread of places.
func mutations(b []byte) [][]byte {
	var out [][]byte
	step := max(1, len(b)/40)
	for i := 0; i < len(b); i += step {
		out = append(out, b[:i])
		for _, c := range []byte{'"', '\\', '{', ']', ',', 0x01, 0xff, ' '} {
			m := bytes.Clone(b)
			m[i] = c
			out = append(out, m)
		}
	}
	return out
}

// TestScanValidMatchesReference: the one pass accepts exactly the lines the
// three checks it replaces accepted (UTF-8, depth, gjson's validator).
func TestScanValidMatchesReference(t *testing.T) {
	var inputs [][]byte
	for _, l := range sampleLines(t) {
		inputs = append(inputs, l)
		inputs = append(inputs, mutations(l)...)
	}
	for _, b := range hostileBodies {
		inputs = append(inputs, []byte(b))
		inputs = append(inputs, mutations([]byte(b))...)
	}
	n := 0
	for _, b := range inputs {
		if got, want := scanValid(b, true), refValid(b); got != want {
			t.Errorf("scanValid(utf8) = %v, reference %v: %.200q", got, want, b)
		}
		if got, want := scanValid(b, false), !depthExceeds(b, MaxDepth()) && gjson.ValidBytes(b); got != want {
			t.Errorf("scanValid = %v, reference %v: %.200q", got, want, b)
		}
		if refValid(b) {
			n++
		}
	}
	if n < 100 || n == len(inputs) {
		t.Errorf("%d of %d inputs valid: the corpus does not probe both ways", n, len(inputs))
	}
}

func FuzzScanValid(f *testing.F) {
	for _, b := range hostileBodies {
		f.Add([]byte(b))
	}
	f.Add([]byte(wireHTTP))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := scanValid(b, true), refValid(b); got != want {
			t.Errorf("scanValid(utf8) = %v, reference %v: %q", got, want, b)
		}
		if got, want := scanValid(b, false), !depthExceeds(b, MaxDepth()) && gjson.ValidBytes(b); got != want {
			t.Errorf("scanValid = %v, reference %v: %q", got, want, b)
		}
	})
}

// TestMessagesMatchReference: AppendMessages reads every body as the gjson
// reader did, and every RPC field equals what the stages after it would
// read from Raw.
func TestMessagesMatchReference(t *testing.T) {
	bodies := sampleBodies(t)
	for _, b := range hostileBodies {
		bodies = append(bodies, []byte(b))
	}
	withRPC := 0
	for _, b := range bodies {
		if d := messagesMismatch(b); d != "" {
			t.Error(d)
		}
		for _, m := range AppendMessages(nil, b, 0, 0) {
			if m.RPC != nil {
				withRPC++
			}
		}
		for _, m := range mutations(b) {
			if d := messagesMismatch(m); d != "" {
				t.Error(d)
			}
		}
	}
	if withRPC < len(bodies)/2 {
		t.Errorf("only %d of %d bodies read in one pass", withRPC, len(bodies))
	}
}

func FuzzAppendMessages(f *testing.F) {
	for _, b := range hostileBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if d := messagesMismatch(b); d != "" {
			t.Error(d)
		}
	})
}

// TestSpecialMaskFirstExact holds specialMask to its contract: the lowest
// byte it marks in a word is the first byte a string scan stops at (by the
// byte tables), and it marks none when there is none. Every byte value at
// every place after non-stopping bytes, followed by random bytes; then
// random words.
func TestSpecialMaskFirstExact(t *testing.T) {
	first := func(w [8]byte, checkUTF8 bool) int {
		tbl := &strSpecial
		if checkUTF8 {
			tbl = &strSpecialUTF8
		}
		for i, c := range w {
			if tbl[c] {
				return i
			}
		}
		return 8
	}
	got := func(w [8]byte, checkUTF8 bool) int {
		m := specialMask(binary.LittleEndian.Uint64(w[:]), checkUTF8)
		if m == 0 {
			return 8
		}
		return bits.TrailingZeros64(m) >> 3
	}
	rng := rand.New(rand.NewPCG(7, 11))
	check := func(w [8]byte) {
		t.Helper()
		for _, u := range []bool{false, true} {
			if g, want := got(w, u), first(w, u); g != want {
				t.Fatalf("word % x (utf8 %v): first mark at %d, want %d", w, u, g, want)
			}
		}
	}
	for p := range 8 {
		for c := range 256 {
			for range 64 {
				var w [8]byte
				for i := range w {
					switch {
					case i < p:
						w[i] = byte(0x20 + rng.IntN(0x60)) // ASCII, not '"' or '\\' unless drawn
						if w[i] == '"' || w[i] == '\\' {
							w[i] = 'a'
						}
					case i == p:
						w[i] = byte(c)
					default:
						w[i] = byte(rng.Uint32())
					}
				}
				check(w)
			}
		}
	}
	for range 1 << 20 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], rng.Uint64())
		check(w)
	}
}

// refStr is str as it was, one byte at a time through the byte tables:
// the oracle of its eight at a time.
func (s *scanner) refStr() bool {
	b := s.b
	i := s.i + 1
	s.esc = false
	tbl := &strSpecial
	if s.utf8 {
		tbl = &strSpecialUTF8
	}
	for {
		for i < len(b) && !tbl[b[i]] {
			i++
		}
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return true
		case c == '\\':
			s.esc = true
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !ishex(b[i+2]) || !ishex(b[i+3]) || !ishex(b[i+4]) || !ishex(b[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			i += n
		}
	}
}

// TestStrMatchesByteByByte holds str, which reads eight bytes at a time,
// to refStr, which reads one at a time: the same verdict, end and escape
// flag on literals made of escapes of every kind, multi-byte and broken
// UTF-8, control characters and quotes, at every offset from the start of
// the buffer and with the literal ending at every distance from its end.
func TestStrMatchesByteByByte(t *testing.T) {
	parts := []string{`\"`, `\\`, `\/`, `\n`, `\u00e9`, `\uD83D\uDE00`, `\u12`, `\x`, `\`, `"`, "é", "中", "\xff", "\xe4\xb8", "\x01", "\t",
		"a", "bc", "defghij", `#`, `]`, " ", "\x7f", "\xc2\xa0"}
	eachLiteral(t, rand.New(rand.NewPCG(3, 5)), parts, 12, func(b []byte, pad int, u bool) bool {
		fast := scanner{b: b, i: pad, utf8: u}
		slow := scanner{b: b, i: pad, utf8: u}
		okFast, okSlow := fast.str(), slow.refStr()
		if okFast != okSlow || okFast && (fast.i != slow.i || fast.esc != slow.esc) {
			t.Fatalf("%q from %d (utf8 %v): str %v end %d esc %v, byte by byte %v end %d esc %v",
				b, pad, u, okFast, fast.i, fast.esc, okSlow, slow.i, slow.esc)
		}
		return okFast
	})
}

// eachLiteral calls check on 30,000 string literals of up to most-1 of
// parts (a quarter left unclosed), each after up to 8 spaces and before up
// to 9 closing braces, with and without the UTF-8 check; check says
// whether the literal was read as closed, and the corpus must have gone
// both ways.
func eachLiteral(t *testing.T, rng *rand.Rand, parts []string, most int, check func(b []byte, pad int, utf8 bool) (closed bool)) {
	t.Helper()
	checked, closed := 0, 0
	for range 30000 {
		var lit strings.Builder
		lit.WriteByte('"')
		for range rng.IntN(most) {
			lit.WriteString(parts[rng.IntN(len(parts))])
		}
		if rng.IntN(4) > 0 {
			lit.WriteByte('"')
		}
		pad := rng.IntN(9)
		b := []byte(strings.Repeat(" ", pad) + lit.String() + strings.Repeat("}", rng.IntN(10)))
		for _, u := range []bool{false, true} {
			checked++
			if check(b, pad, u) {
				closed++
			}
		}
	}
	if closed < checked/10 || closed > checked*9/10 {
		t.Fatalf("%d of %d literals closed: the corpus does not probe both ways", closed, checked)
	}
}

// TestStrIntoMatchesStr: strInto accepts and rejects what str does, ends
// where it ends, and writes the value jsonstr.AppendUnescaped gives, with
// dst no longer than its contract asks (the rest of the line).
func TestStrIntoMatchesStr(t *testing.T) {
	parts := []string{`\"`, `\\`, `\/`, `\n`, `\r`, `\u00e9`, `\u000A`, `\uD83D\uDE00`, `\uD83D`, `\uDE00`, `\uD83D\u0041`, `\uD83D\uZZZZ`,
		`\u12`, `\x`, `\`, `"`, "é", "中", "😀", "\xff", "\xe4\xb8", "\x01", "\t", "a", "bc", "defghij", `#`, " ", "\x7f", "\xc2\xa0"}
	eachLiteral(t, rand.New(rand.NewPCG(7, 11)), parts, 14, func(b []byte, pad int, u bool) bool {
		want := scanner{b: b, i: pad, utf8: u}
		got := scanner{b: b, i: pad, utf8: u}
		dst := make([]byte, len(b)-pad)
		okWant := want.str()
		n, okGot := got.strInto(dst)
		if okGot != okWant || okGot && (got.i != want.i || got.esc != want.esc) {
			t.Fatalf("%q from %d (utf8 %v): strInto %v end %d esc %v, str %v end %d esc %v",
				b, pad, u, okGot, got.i, got.esc, okWant, want.i, want.esc)
		}
		if okGot {
			if v := jsonstr.AppendUnescaped(nil, b[pad+1:got.i-1]); !bytes.Equal(dst[:n], v) {
				t.Fatalf("%q from %d (utf8 %v): strInto wrote %q, AppendUnescaped gives %q", b, pad, u, dst[:n], v)
			}
		}
		return okGot
	})
}

// TestStrEscapeDenseMatchesByteByByte is TestStrMatchesByteByByte and
// TestStrIntoMatchesStr on longer literals as dense in escapes as a body of
// JSON text escaped inside a JSON string (a wire log's): the one-character
// escapes that str and strInto take inside their eight-byte loop, at every
// place in a word and across words, next to the stops they leave it for.
func TestStrEscapeDenseMatchesByteByByte(t *testing.T) {
	parts := []string{`\"`, `\"`, `\"`, `\\`, `\\\"`, `\n`, `\t`, `\/`, `\u00e9`, `\x`, `\`, `"`, "é", "\xff", "\x01",
		"a", "bc", "def", "ghij", "klmnopq", `:`, `,`, `{`, "0123456789abcdef"}
	eachLiteral(t, rand.New(rand.NewPCG(13, 17)), parts, 40, func(b []byte, pad int, u bool) bool {
		fast := scanner{b: b, i: pad, utf8: u}
		slow := scanner{b: b, i: pad, utf8: u}
		into := scanner{b: b, i: pad, utf8: u}
		okFast, okSlow := fast.str(), slow.refStr()
		dst := make([]byte, len(b)-pad)
		n, okInto := into.strInto(dst)
		if okFast != okSlow || okInto != okSlow || okSlow && (fast.i != slow.i || fast.esc != slow.esc || into.i != slow.i || into.esc != slow.esc) {
			t.Fatalf("%q from %d (utf8 %v): str %v end %d esc %v, strInto %v end %d esc %v, byte by byte %v end %d esc %v",
				b, pad, u, okFast, fast.i, fast.esc, okInto, into.i, into.esc, okSlow, slow.i, slow.esc)
		}
		if okInto {
			if v := jsonstr.AppendUnescaped(nil, b[pad+1:into.i-1]); !bytes.Equal(dst[:n], v) {
				t.Fatalf("%q from %d (utf8 %v): strInto wrote %q, AppendUnescaped gives %q", b, pad, u, dst[:n], v)
			}
		}
		return okSlow
	})
}
