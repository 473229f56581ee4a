package traffic

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"
)

// Options say what log to write.
type Options struct {
	// Seed: the same seed and options give byte-identical output.
	Seed int64
	// Bytes: stop after about this many bytes (the record or unit under
	// way is completed, so a little over).
	Bytes int64
	// Exchanges: stop after this many exchanges (counted on the client's
	// side, so that the client's and the server's logs of a seed hold the
	// same traffic). At least one of Bytes and Exchanges must be set;
	// whichever is reached first ends the log.
	Exchanges int64
	// Format: "wire" (default), "har" (a DevTools HAR 1.2 document),
	// "claude" (a Claude Desktop mcp-server-NAME.log).
	Format string
	// Side: "client" (default) or "server": the same traffic as the
	// server's wirelog middleware logs it (wire format only).
	Side string
	// Sessions: MCP sessions open at once, interleaved (default 400;
	// not used by the claude format, whose log is one server's).
	Sessions int
	// Start: the first timestamp (default 2026-10-17T10:00:00Z).
	Start time.Time
	// Days: cut the traffic into this many equal slices (by exchanges
	// when Exchanges is set, else by bytes), each on the next calendar
	// day at the same time of day; sessions carry on across the jump.
	// 0 or 1: timestamps advance as traffic does, a few ms per record.
	Days int
	// Shape: "" normal traffic; "open-conversations": Conversations
	// sessions, each an initialize and one tools/call never answered
	// (its stream cut, or the client gave up waiting) and no DELETE;
	// "long-sse": one session whose tools/call is answered on an event
	// stream of Events progress notifications and then the result.
	// Shapes ignore Bytes and Exchanges and are written in the wire
	// format only.
	Shape         string
	Conversations int // open-conversations (default 1000)
	Events        int // long-sse (default 1000)
}

// Stats say what was written.
type Stats struct {
	Records   int64 // lines (wire, claude) or entries (har)
	Exchanges int64 // the exchanges ingest will find in the log: requests with an id
	Bytes     int64
	// ByOutcome is the outcome each exchange was made to have, in the
	// outcome names of package classify.
	ByOutcome map[string]int64
}

// Shapes.
const (
	ShapeOpenConversations = "open-conversations"
	ShapeLongSSE           = "long-sse"
)

// DefaultStart is the first timestamp when Options.Start is zero.
var DefaultStart = time.Date(2026, 10, 17, 10, 0, 0, 0, time.UTC)

// Write writes a log to w and says what it wrote. It stops at the first
// error writing to w and returns it.
func Write(w io.Writer, o Options) (Stats, error) {
	if o.Format == "" {
		o.Format = "wire"
	}
	if o.Side == "" {
		o.Side = "client"
	}
	if o.Sessions <= 0 {
		o.Sessions = 400
	}
	if o.Start.IsZero() {
		o.Start = DefaultStart
	}
	o.Start = o.Start.UTC()
	switch o.Format {
	case "wire", "har", "claude":
	default:
		return Stats{}, fmt.Errorf("traffic: format %q: use wire, har or claude", o.Format)
	}
	switch o.Side {
	case "client":
	case "server":
		if o.Format != "wire" {
			return Stats{}, fmt.Errorf("traffic: a %s log is the client's view; -side server needs the wire format", o.Format)
		}
	default:
		return Stats{}, fmt.Errorf("traffic: side %q: use client or server", o.Side)
	}
	if o.Bytes < 0 || o.Exchanges < 0 || o.Days < 0 || o.Conversations < 0 || o.Events < 0 {
		return Stats{}, errors.New("traffic: sizes and counts must not be negative")
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var st Stats
	var err error
	switch o.Shape {
	case "":
		if o.Bytes == 0 && o.Exchanges == 0 {
			return Stats{}, errors.New("traffic: set Bytes or Exchanges (how much to write)")
		}
		var s *sim
		switch o.Format {
		case "wire":
			s = newSim(o, bw, wireRenderer{})
		case "har":
			s = newSim(o, bw, &harRenderer{})
		case "claude":
			st, err = writeClaude(bw, o)
		}
		if s != nil {
			err = s.run()
			st = s.stats
		}
	case ShapeOpenConversations, ShapeLongSSE:
		if o.Format != "wire" {
			return Stats{}, fmt.Errorf("traffic: shape %s is written in the wire format only", o.Shape)
		}
		st, err = writeShape(bw, o)
	default:
		return Stats{}, fmt.Errorf("traffic: shape %q: use %s or %s", o.Shape, ShapeOpenConversations, ShapeLongSSE)
	}
	if err == nil {
		err = bw.Flush()
	}
	return st, err
}
