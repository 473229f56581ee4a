package pipeline

import (
	"fmt"

	"github.com/tidwall/gjson"

	"mcptrace/decode"
	"mcptrace/input"
)

// Stdin is the input name that reads standard input.
const Stdin = input.StdinName

// mergeWanted decides whether client and server views are merged. In auto
// mode it reads the head of every regular file (what format detection reads)
// to learn which sides the run holds; a stream cannot be read twice and
// does not count.
//
// allWire reports that every input is a regular file in the wire format:
// such a run can read its inputs side by side in event-time order, so the
// merge needs to hold rows only for its window.
func mergeWanted(cfg Config, ins []input.Input) (merging, allWire bool, err error) {
	switch cfg.Merge {
	case "on", "off", "", "auto":
	default:
		return false, false, fmt.Errorf("merge mode %q: use auto, on or off", cfg.Merge)
	}
	var client, server bool
	allWire = len(ins) > 1
	for _, in := range ins {
		if in.Kind != input.File {
			allWire = false
			continue
		}
		r, err := input.Open(in)
		if err != nil {
			allWire = false
			continue // reported when the input is read
		}
		head, _ := r.Head()
		r.Close()
		format := decode.Format(cfg.Format)
		if format == "" {
			format, _ = decode.Detect(head)
		}
		if format != decode.FormatWire && len(head) > 0 {
			allWire = false // an empty file does not stop the others from being read side by side
		}
		switch format {
		case "":
		case decode.FormatWire, decode.FormatStdioJSONL:
			first := decode.FirstLine(head)
			if gjson.GetBytes(first, "side").String() == "server" || gjson.GetBytes(first, "viewpoint").String() == "server" {
				server = true
			} else {
				client = true
			}
		case decode.FormatOTLPTraces, decode.FormatOTLPLogs:
			client, server = true, true // spans of either kind
		default:
			client = true // HAR, Claude Desktop, VS Code, Inspector: the client's view
		}
	}
	switch cfg.Merge {
	case "on":
		return true, allWire, nil
	case "off":
		return false, allWire, nil
	}
	return client && server, allWire, nil
}
