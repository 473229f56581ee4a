package correlate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"

	"mcptrace/schema"
)

// exchangeIDOracle is exchangeID as it was before issue 11's allocation
// work (a sha256 hash.Hash written piece by piece): the differential test
// and the fuzz target check the new one against it.
func exchangeIDOracle(pos schema.Position, m *schema.Message) string {
	h := sha256.New()
	src := pos.ID // the canonical identity, when the pipeline set it
	if src == "" {
		src = pos.Source
	}
	h.Write([]byte(src))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, pos.Line, 10))
	if pos.Sub != 0 {
		h.Write([]byte{'.'})
		h.Write(strconv.AppendInt(nil, int64(pos.Sub), 10))
	}
	h.Write([]byte{0, byte(m.ID.Type)})
	h.Write([]byte(m.ID.Text))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, int64(m.BatchIndex), 10))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, int64(m.Event), 10))
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func checkExchangeID(t *testing.T, scratch []byte, pos schema.Position, m *schema.Message) []byte {
	t.Helper()
	got, scratch := exchangeID(pos, m, scratch)
	if want := exchangeIDOracle(pos, m); got != want {
		t.Fatalf("exchangeID(%+v, id %+v batch %d event %d) = %s, want %s", pos, m.ID, m.BatchIndex, m.Event, got, want)
	}
	return scratch
}

func TestExchangeIDMatchesOracle(t *testing.T) {
	var scratch []byte
	long := string(make([]byte, 300)) // longer than any scratch so far
	for _, pos := range []schema.Position{
		{Source: "a.ndjson", Line: 1},
		{Source: "a.ndjson", ID: "s3://b/a.ndjson", Line: 7, Sub: 2},
		{Source: long, Line: -3, Sub: -1},
		{},
	} {
		for _, m := range []schema.Message{
			{ID: schema.ID{Type: schema.IDNumber, Text: "1"}},
			{ID: schema.ID{Type: schema.IDString, Text: "abc"}, BatchIndex: 3, Event: 9},
			{BatchIndex: -1, Event: -2},
		} {
			scratch = checkExchangeID(t, scratch, pos, &m)
		}
	}
}

func FuzzExchangeID(f *testing.F) {
	f.Add("a.ndjson", "", int64(1), int32(0), byte(1), "1", 0, 0)
	f.Add("x", "id", int64(-5), int32(3), byte(2), "\x00", 4, 7)
	var scratch []byte
	f.Fuzz(func(t *testing.T, src, id string, line int64, sub int32, typ byte, text string, batch, event int) {
		pos := schema.Position{Source: src, ID: id, Line: line, Sub: sub}
		m := schema.Message{ID: schema.ID{Type: schema.IDType(typ), Text: text}, BatchIndex: batch, Event: event}
		scratch = checkExchangeID(t, scratch, pos, &m)
	})
}

// conversationKeyOracle is ConversationKey as it was before issue 11's
// allocation work (string concatenation).
func conversationKeyOracle(o *schema.Observation) string {
	switch {
	case o.SessionID != "":
		return string(o.Side) + "|" + o.Format + "|s|" + o.SessionID
	case o.Connection != "":
		return string(o.Side) + "|" + o.Format + "|c|" + o.Pos.Source + "|" + o.Connection
	}
	return string(o.Side) + "|" + o.Format + "|f|" + o.Pos.Source
}

func FuzzConversationKey(f *testing.F) {
	f.Add("client", "wire", "s1", "", "a.ndjson")
	f.Add("server", "har", "", "c7", "b.har")
	f.Add("", "", "", "", "")
	var buf []byte
	f.Fuzz(func(t *testing.T, side, format, session, conn, source string) {
		o := &schema.Observation{Side: schema.Side(side), Format: format, SessionID: session, Connection: conn}
		o.Pos.Source = source
		want := conversationKeyOracle(o)
		if got := ConversationKey(o); got != want {
			t.Fatalf("ConversationKey = %q, want %q", got, want)
		}
		buf = appendConversationKey(buf[:0], o)
		if string(buf) != want {
			t.Fatalf("appendConversationKey = %q, want %q", buf, want)
		}
	})
}

func FuzzOwnIDText(f *testing.F) {
	for _, s := range []string{"0", "1", "17", "1023", "1024", "9999", "01", "-1", "1.0", "", "abc", "12a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := ownIDText(s); got != s {
			t.Fatalf("ownIDText(%q) = %q", s, got)
		}
	})
}
