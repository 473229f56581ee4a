package decode

import (
	"fmt"
	"io"
	"unsafe"

	"github.com/tidwall/gjson"

	"mcptrace/schema"
)

// decodeHARWhole is the HAR decoder as it was before it streamed (commit
// 90cede8): it reads the whole document, then walks it with gjson. The
// tests hold the streaming decoder to it: same records, reasons, details,
// positions and excerpts for every document within the document limit.
func decodeHARWhole(source string, r io.Reader, e Emitter) error {
	data, err := readDocument(source, r, e, "the HAR document")
	if err != nil {
		return err
	}
	doc := schema.Position{Source: source, Line: 1}
	data = trimBOM(data)
	switch {
	case IsBlank(data):
		e.Quarantine(doc, ReasonNotJSON, "empty input: not a HAR document", data)
		return nil
	case depthExceeds(data, MaxDepth()):
		e.Quarantine(doc, ReasonTooDeep, fmt.Sprintf("JSON nests deeper than %d levels (-max-depth)", MaxDepth()), clipRaw(data))
		return nil
	case !validJSON(data):
		e.Quarantine(doc, ReasonNotJSON, "not valid JSON (truncated or corrupt HAR document)", clipRaw(data))
		return nil
	}
	// data is never written again: read it as a string without copying it.
	root := gjson.Parse(unsafe.String(unsafe.SliceData(data), len(data)))
	if !root.IsObject() {
		e.Quarantine(doc, ReasonNotObject, fmt.Sprintf("a HAR document is a JSON object, found %s", root.Type), clipRaw(data))
		return nil
	}
	entries := root.Get("log.entries")
	if !entries.IsArray() {
		e.Quarantine(doc, ReasonMissingField, `no "log.entries" array: not a HAR document`, clipRaw(data))
		return nil
	}
	d := harDecoder{source: source, e: e, legacy: map[string]bool{}}
	stop := stopFunc(e)
	stopped := false
	entries.ForEach(func(_, ent gjson.Result) bool {
		if stopped = stop(); stopped {
			return false
		}
		d.survey(ent)
		return true
	})
	n := int64(0)
	entries.ForEach(func(_, ent gjson.Result) bool {
		if stopped = stopped || stop(); stopped {
			return false
		}
		n++
		d.entry(schema.Position{Source: source, Line: n}, ent)
		return true
	})
	if stopped {
		return ErrStopped
	}
	return nil
}
