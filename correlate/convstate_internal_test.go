package correlate

import (
	"reflect"
	"testing"
	"time"

	"mcptrace/schema"
)

// A conversation keeps its times as stamps, its session as a part of its
// key, its protocol version as a number, its first log and position by
// pointer; what does not fit (a second log, a time a stamp cannot hold, a
// version not known) goes to its rare part. Each reads back as it was set.
func TestConversationCompactState(t *testing.T) {
	c := NewShard(func(Item) {})
	at := time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)
	obs := func(src, sess string, when time.Time, line int64) *schema.Observation {
		return &schema.Observation{Pos: schema.Position{Source: src, ID: "id:" + src, Line: line}, Side: schema.SideClient, Format: "wire",
			Transport: schema.TransportStreamableHTTP, Time: when, EndTime: when, SessionID: sess}
	}
	o := obs("a.ndjson", "sess-1", at, 1)
	c.seq = 1
	cv := c.conv(o)
	if !cv.startedAt().IsZero() || !cv.lastAt().IsZero() {
		t.Fatalf("a new conversation has times %v and %v, want zero", cv.startedAt(), cv.lastAt())
	}
	if cv.session() != "sess-1" || cv.key != ConversationKey(o) {
		t.Errorf("session %q key %q", cv.session(), cv.key)
	}
	if got := c.conv(obs("a.ndjson", "", at, 1)); got.session() != "" {
		t.Errorf("a conversation without a session has session %q", got.session())
	}
	cv.setTimes(at.Add(time.Minute), at)
	if !cv.lastAt().Equal(at.Add(time.Minute)) || !cv.startedAt().Equal(at) || cv.wideTimes {
		t.Errorf("times %v %v (wide %v)", cv.lastAt(), cv.startedAt(), cv.wideTimes)
	}
	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	cv.setTimes(far, at)
	if !cv.lastAt().Equal(far) || !cv.startedAt().Equal(at) || !cv.wideTimes {
		t.Errorf("times %v %v (wide %v), want %v %v wide", cv.lastAt(), cv.startedAt(), cv.wideTimes, far, at)
	}
	for _, v := range []string{"2025-06-18", "", "1999-01-01", "2026-07-28"} {
		cv.setVersion(v)
		if cv.version() != v {
			t.Errorf("version %q reads back as %q", v, cv.version())
		}
	}
	cv.seen(o.Pos, &c.poss)
	cv.seen(schema.Position{Source: "a.ndjson", ID: "id:a.ndjson", Line: 7}, &c.poss)
	cv.seen(schema.Position{Source: "a.ndjson", ID: "id:a.ndjson", Line: 5}, &c.poss)
	if p := cv.lastPos(); len(p) != 1 || p[0] != (schema.Position{Source: "a.ndjson", ID: "id:a.ndjson", Line: 7}) {
		t.Errorf("last positions %+v, want line 7 of one log", p)
	}
	other := c.conv(obs("a.ndjson", "sess-2", at, 2))
	other.seen(schema.Position{Source: "a.ndjson", ID: "id:a.ndjson", Line: 2}, &c.poss)
	if other.pos0 != cv.pos0 || other.lastPos()[0].Line != 2 || cv.lastPos()[0].Line != 7 {
		t.Errorf("two conversations of a log: positions %+v and %+v, shared %v", other.lastPos(), cv.lastPos(), other.pos0 == cv.pos0)
	}
	o2 := obs("b.ndjson", "sess-1", at, 3)
	if c.conv(o2) != cv {
		t.Fatal("the same session in another file is another conversation")
	}
	cv.seen(o2.Pos, &c.poss)
	cv.seen(schema.Position{Source: "a.ndjson", ID: "id:a.ndjson", Line: 9}, &c.poss)
	cv.seen(schema.Position{Source: "b.ndjson", ID: "id:b.ndjson", Line: 4}, &c.poss)
	if p := cv.lastPos(); len(p) != 2 || p[0].Line != 9 || p[1].Line != 4 || p[1].ID != "id:b.ndjson" {
		t.Errorf("last positions %+v, want line 9 of a, 4 of b", p)
	}
	if l := cv.logList(); len(l) != 2 || l[0] != logOf(o) || l[1] != logOf(o2) || cv.lin() != logOf(o) {
		t.Errorf("logs %+v", l)
	}
	if len(c.byLog[logOf(o)].convs) != 3 || len(c.byLog[logOf(o2)].convs) != 1 {
		t.Errorf("byLog: %d and %d conversations", len(c.byLog[logOf(o)].convs), len(c.byLog[logOf(o2)].convs))
	}
	a, b := c.impls.of(schema.Implementation{Name: "x", Version: "1"}), c.impls.of(schema.Implementation{Name: "x", Version: "1"})
	if a != b || *a != (schema.Implementation{Name: "x", Version: "1"}) || c.impls.of(schema.Implementation{}) != &noImpl {
		t.Errorf("impls: %p %p %+v", a, b, *a)
	}
}

// A parked row keeps a session that is not its conversation's and a
// retry_of in its rare part, and takes its id from its exchange: a row
// whose id is not its exchange's is not parked. Each parked row builds
// back to the row parked.
func TestParkedRowRarePart(t *testing.T) {
	c := NewShard(func(Item) {})
	at := time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)
	o := &schema.Observation{Pos: schema.Position{Source: "a.ndjson", Line: 1}, Side: schema.SideClient, Format: "wire",
		Transport: schema.TransportStreamableHTTP, Time: at, EndTime: at, SessionID: "sess-1"}
	c.seq = 1
	cv := c.conv(o)
	mk := func(id string) *exchange {
		ex := &exchange{id: schema.ID{Type: schema.IDString, Text: id}, exID: "0123456789abcdef01234567", startedAt: at, cv: cv,
			exLive: &exLive{}}
		ex.setMethod("tools/call")
		r := &rowBox{}
		ex.row = &r.row
		ex.row.ExchangeID, ex.row.Method, ex.row.StartedAt, ex.row.EndedAt = ex.exID, ex.method(), at, at
		ex.row.Source, ex.row.Sides, ex.row.Initiator, ex.row.Transport, ex.row.RetryOrigin, ex.row.Format = "a.ndjson", "client", "client", "streamable-http", "application", "wire"
		ex.row.HTTPStatuses = r.statuses[:0:1]
		ex.row.JSONRPCID = schema.Str(id)
		return ex
	}
	for _, tc := range []struct {
		name             string
		session, retryOf string
		id               string
		parks, more      bool
	}{
		{"conversation's session", "sess-1", "", "7", true, false},
		{"other session", "sess-2", "", "7", true, true},
		{"retry_of", "sess-1", "feedfacefeedfacefeedface", "7", true, true},
		{"id not the exchange's", "sess-1", "", "8", false, false},
	} {
		ex := mk("7")
		ex.row.SessionID = schema.Str(tc.session)
		if tc.retryOf != "" {
			ex.row.RetryOf = schema.Str(tc.retryOf)
		}
		*ex.row.JSONRPCID = tc.id
		want := *ex.row
		ex.park(&c.texts)
		if got := ex.parked != nil; got != tc.parks {
			t.Errorf("%s: parked %v, want %v", tc.name, got, tc.parks)
			continue
		}
		if tc.parks && (ex.parked.more != nil) != tc.more {
			t.Errorf("%s: rare part %v, want %v", tc.name, ex.parked.more != nil, tc.more)
		}
		if got := ex.getRow(); !reflect.DeepEqual(*got, want) {
			t.Errorf("%s: the row built again is\n%+v\nwant\n%+v", tc.name, *got, want)
		}
	}
}

// The Linker's conversations and requests keep their start times as
// stamps, and in full when a stamp cannot hold one (a year before 1679 or
// after 2261); each reads back as it was set.
func TestLinkTimesReadBack(t *testing.T) {
	at := time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)
	far := time.Date(9999, 12, 31, 23, 59, 59, 999, time.UTC)
	early := time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)
	for _, tc := range [][2]time.Time{{at, at.Add(-time.Hour)}, {far, at}, {at, early}, {{}, at}, {{}, {}}} {
		cv := &linkConv{}
		cv.setStarts(tc[0], tc[1])
		if !cv.lastStartAt().Equal(tc[0]) || !cv.firstStartAt().Equal(tc[1]) || cv.lastStartAt().IsZero() != tc[0].IsZero() {
			t.Errorf("starts %v, %v read back as %v, %v", tc[0], tc[1], cv.lastStartAt(), cv.firstStartAt())
		}
		for _, s := range tc {
			x := newLinkEx(cv, &linkEvent{time: s})
			if !x.startedAt().Equal(s) || x.startedAt().IsZero() != s.IsZero() {
				t.Errorf("a request's start %v reads back as %v", s, x.startedAt())
			}
		}
	}
}

// A live exchange's tool (what retry safety looks up) is its row's
// tool_name for a tools/call, whether its row is parked or not, and none
// for another method (a prompts/get's row names its prompt).
func TestExchangeToolFromRow(t *testing.T) {
	c := NewShard(func(Item) {})
	at := time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)
	o := &schema.Observation{Pos: schema.Position{Source: "a.ndjson", Line: 1}, Side: schema.SideClient, Format: "wire",
		Transport: schema.TransportStreamableHTTP, Time: at, EndTime: at, SessionID: "sess-1"}
	c.seq = 1
	cv := c.conv(o)
	for _, tc := range []struct {
		method, name, want string
		named              bool
	}{
		{"tools/call", "write_file", "write_file", true},
		{"tools/call", "", "", true},
		{"tools/call", "", "", false},
		{"prompts/get", "summarize", "", true},
	} {
		ex := &exchange{id: schema.ID{Type: schema.IDNumber, Text: "3"}, exID: "0123456789abcdef01234567", startedAt: at, cv: cv, exLive: &exLive{}}
		ex.setMethod(tc.method)
		box := &rowBox{}
		ex.row = &box.row
		r := ex.row
		r.ExchangeID, r.Method, r.StartedAt, r.EndedAt, r.Source, r.Sides, r.Initiator, r.Transport, r.RetryOrigin, r.Format =
			ex.exID, ex.method(), at, at, "a.ndjson", "client", "client", "streamable-http", "none", "wire"
		r.HTTPStatuses = box.statuses[:0:1]
		if tc.named {
			r.ToolName = schema.Str(tc.name)
		}
		if got := ex.tool(); got != tc.want {
			t.Errorf("%s %q: tool %q, want %q", tc.method, tc.name, got, tc.want)
		}
		ex.park(&c.texts)
		if ex.parked == nil {
			t.Fatalf("%s %q: not parked", tc.method, tc.name)
		}
		if got := ex.tool(); got != tc.want {
			t.Errorf("%s %q parked: tool %q, want %q", tc.method, tc.name, got, tc.want)
		}
	}
}
