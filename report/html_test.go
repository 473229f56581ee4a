package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// The HTML page escapes every text it shows (dataset values are the log's
// words), loads nothing (no URL but the SVG namespace, no script) and
// shows each cell as text does.
func TestHTMLEscapesAndLoadsNothing(t *testing.T) {
	evil := `<script>alert("x")</script><img src=http://example.invalid/x.png>`
	tools := &Report{Name: "tools", Title: "Tools", Tables: []*Table{{Name: "tools", Title: "Tool calls " + evil,
		Cols: []Column{{Name: "tool", Kind: Text}, {Name: "calls", Kind: Int}, {Name: "failed", Kind: Int}, {Name: "error_rate", Kind: Rate},
			{Name: "transport_rate", Kind: Rate}, {Name: "protocol_rate", Kind: Rate}, {Name: "tool_error_rate", Kind: Rate}},
		Rows: [][]any{{evil, int64(8), int64(2), 0.25, 0.125, 0.0, 0.125}}}}}
	sess := &Report{Name: "session", Title: "Session timeline", Tables: []*Table{{Name: "timeline", Title: "Session k1:" + evil,
		Cols: []Column{{Name: "n", Kind: Int}, {Name: "started_at", Kind: Time}, {Name: "latency_ms", Kind: MS}, {Name: "method", Kind: Text},
			{Name: "tool", Kind: Text}, {Name: "jsonrpc_id", Kind: Text}, {Name: "posts", Kind: Int}, {Name: "http_statuses", Kind: Text},
			{Name: "outcome", Kind: Text}, {Name: "layer", Kind: Text}, {Name: "repeats", Kind: Text}, {Name: "retry_origin", Kind: Text},
			{Name: "flags", Kind: Text}, {Name: "reason", Kind: Text}, {Name: "exchange_id", Kind: Text}},
		Rows: [][]any{
			{int64(1), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), 12.5, "tools/call", evil, "1", int64(2), "503 200", "TOOL_ERROR", "application", nil, nil, "false_success", evil, "a"},
			{int64(2), time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC), 3.0, "tools/call", evil, "2", int64(1), "200", "TOOL_SUCCESS", "application", "#1", "sdk", "unsafe_retry", nil, "b"},
		}}}}
	var b bytes.Buffer
	if err := Render(&b, "html", Meta{Dataset: "/d/" + evil, Warnings: []string{evil}}, []*Report{tools, sess}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<script") || strings.Contains(page, "<img") {
		t.Errorf("the page holds unescaped markup from the data")
	}
	if !strings.Contains(page, "&lt;script&gt;") {
		t.Errorf("the page does not show the escaped text")
	}
	// Every element and attribute, as a browser would parse them: no
	// script, no element that loads, no link but to a section of the page.
	z := html.NewTokenizer(strings.NewReader(page))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, more := z.TagName()
		switch string(name) {
		case "script", "img", "link", "iframe", "object", "embed", "image", "use", "base", "form", "audio", "video", "source":
			t.Errorf("the page has a <%s> element", name)
		}
		for more {
			var k, v []byte
			k, v, more = z.TagAttr()
			switch key := string(k); {
			case key == "href" && !strings.HasPrefix(string(v), "#"):
				t.Errorf("<%s href=%q>", name, v)
			case key == "src" || key == "srcset" || key == "action" || key == "xlink:href" || strings.HasPrefix(key, "on"):
				t.Errorf("<%s %s=%q>", name, key, v)
			case key == "style" && strings.Contains(string(v), "url("):
				t.Errorf("<%s style=%q>", name, v)
			}
		}
	}
	for _, want := range []string{`data-col="error_rate">25.0%</td>`, `data-col="calls">8</td>`, `data-chart="tool-errors"`, `data-chart="sequence"`,
		"HTTP 503", "attempt 2 of 2", "↻ #1", `class="retry unsafe"`, `content="default-src 'none'; style-src 'unsafe-inline'"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
