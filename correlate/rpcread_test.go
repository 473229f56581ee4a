package correlate_test

import (
	"encoding/json"
	"testing"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/schema"
)

// withoutRPC is a deep copy of obs whose messages lack the decoder's typed
// fields: what a reader of Raw alone sees.
func withoutRPC(obs []*schema.Observation) []*schema.Observation {
	out := make([]*schema.Observation, len(obs))
	for i, o := range obs {
		c := *o
		c.Messages = append([]schema.Message(nil), o.Messages...)
		for j := range c.Messages {
			c.Messages[j].RPC = nil
		}
		out[i] = &c
	}
	return out
}

func rowsJSON(t *testing.T, rows []schema.Exchange) []string {
	out := make([]string, len(rows))
	for i := range rows {
		b, err := json.Marshal(rows[i])
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// TestTypedFieldsCorrelateAsRaw: every sample correlates to the same rows,
// column for column, whether the correlator and classify read the
// decoder's typed fields or parse Raw; and most messages (requests,
// responses, cancellations) have typed fields.
func TestTypedFieldsCorrelateAsRaw(t *testing.T) {
	obs := decodeSamples(t, sampleFiles(t))
	typed, all := 0, 0
	for _, o := range obs {
		for _, m := range o.Messages {
			if m.Kind == schema.MsgNotification && m.Method != "notifications/cancelled" {
				continue // read for its count only: no typed fields
			}
			all++
			if m.RPC != nil {
				typed++
			}
		}
	}
	if typed < all*9/10 {
		t.Errorf("%d of %d sample messages have typed fields", typed, all)
	}
	a, b := rowsJSON(t, perLog(obs)), rowsJSON(t, perLog(withoutRPC(obs)))
	if len(a) != len(b) || len(a) < 100 {
		t.Fatalf("%d rows typed, %d raw", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("row %d:\ntyped %s\n  raw %s", i, a[i], b[i])
		}
	}
}

// TestFoldedNotificationsCount: a stream whose progress notifications the
// decoder folds is correlated to the same rows and counts as one that
// keeps them all.
func TestFoldedNotificationsCount(t *testing.T) {
	body := ""
	for range 50 {
		body += "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":5}}\n\n"
	}
	body += "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n"
	b, _ := json.Marshal(body)
	lines := []string{
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:00Z","end_ts":"2026-10-17T10:00:01Z","side":"client","session_id":"s","http":{"request":{"method":"POST","body":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}"},"response":{"status":200,"content_type":"text/event-stream","body":` + string(b) + `}}}`,
		`{"mcptrace":"wire/1","ts":"2026-10-17T10:00:02Z","side":"client","session_id":"s","http":{"request":{"method":"GET"},"response":{"status":200,"content_type":"text/event-stream","stream_end":"reset","body":` + string(b) + `}}}`,
	}
	run := func(fold bool) ([]string, int64) {
		d := decode.NewWireDecoder()
		d.Fold = fold
		var obs []*schema.Observation
		for i, l := range lines {
			o, err := d.Line([]byte(l), schema.Position{Source: "f", Line: int64(i + 1)})
			if err != nil {
				t.Fatal(err)
			}
			if fold && len(o.Messages) > 4 {
				t.Fatalf("%d messages kept with folding", len(o.Messages))
			}
			obs = append(obs, o)
		}
		var rows []schema.Exchange
		c := correlate.New(func(e *schema.Exchange) { rows = append(rows, *e) })
		for _, o := range obs {
			c.Add(o)
		}
		c.Flush()
		return rowsJSON(t, rows), c.Stats.Notifications
	}
	a, na := run(false)
	b2, nb := run(true)
	if na != 100 || nb != na {
		t.Errorf("notifications: %d unfolded, %d folded; want 100", na, nb)
	}
	if len(a) != len(b2) || len(a) == 0 {
		t.Fatalf("rows: %d unfolded, %d folded", len(a), len(b2))
	}
	for i := range a {
		if a[i] != b2[i] {
			t.Errorf("row %d:\nunfolded %s\n  folded %s", i, a[i], b2[i])
		}
	}
}
