package decode

import (
	"strings"
	"testing"

	"mcptrace/schema"
)

// collector is an Emitter for tests: it keeps everything a decoder emits.
type collector struct {
	obs   []*schema.Observation
	quar  []collected
	skips []collected
}

type collected struct {
	pos            schema.Position
	reason, detail string
	raw            string
}

func (c *collector) Observation(o *schema.Observation) { c.obs = append(c.obs, o) }
func (c *collector) Quarantine(pos schema.Position, reason, detail string, raw []byte) {
	c.quar = append(c.quar, collected{pos: pos, reason: reason, detail: detail, raw: string(raw)})
}
func (c *collector) Skip(pos schema.Position, why string) {
	c.skips = append(c.skips, collected{pos: pos, reason: why})
}

// records is how many records reached the collector.
func (c *collector) records() int { return len(c.obs) + len(c.quar) + len(c.skips) }

// decodeString runs a format's decoder over text.
func decodeString(t *testing.T, f Format, source, text string) *collector {
	t.Helper()
	dec, ok := DecoderFor(f)
	if !ok {
		t.Fatalf("no decoder for %s", f)
	}
	c := &collector{}
	if err := dec(source, strings.NewReader(text), c); err != nil {
		t.Fatalf("%s decoder: %v", f, err)
	}
	return c
}

func TestWireFileDecoderAccountsForEveryLine(t *testing.T) {
	text := wireHTTP + "\n\nnot json\n" + wireHTTP
	c := decodeString(t, FormatWire, "w.ndjson", text)
	if len(c.obs) != 2 || len(c.quar) != 1 || len(c.skips) != 1 || c.records() != 4 {
		t.Errorf("obs %d quar %d skips %d", len(c.obs), len(c.quar), len(c.skips))
	}
	if c.quar[0].pos.Line != 3 || c.quar[0].reason != ReasonNotJSON || c.obs[1].Pos.Line != 4 || c.obs[0].Format != "wire" {
		t.Errorf("positions: %+v %+v", c.quar[0], c.obs[1].Pos)
	}
	if f, ok := Detect([]byte(wireHTTP)); !ok || f != FormatWire {
		t.Errorf("detected %q", f)
	}
}
