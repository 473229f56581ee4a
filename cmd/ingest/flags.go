package main

import (
	"flag"
	"fmt"
	"slices"
	"time"

	"mcptrace/decode"
)

// flagRule is what a numeric or enumerated flag accepts.
type flagRule struct {
	min  int64    // smallest accepted value (a duration's in nanoseconds)
	max  int64    // largest accepted value, when not 0
	want string   // said when the value is refused
	one  []string // for a string flag: the values it accepts ("" included when allowed)
}

// flagRules are the bounds of ingest's flags: a value outside them is a
// usage error (exit 2) named by its flag, before anything is read.
var flagRules = map[string]flagRule{
	"workers":                 {min: 0, want: "0 (every core) or more"},
	"max-line":                {min: 1, want: "a positive number of bytes"},
	"row-group":               {min: 1, want: "a positive number of rows"},
	"max-document":            {min: 1, want: "a positive number of bytes"},
	"max-body":                {min: 1, want: "a positive number of bytes"},
	"max-sse-events":          {min: 1, want: "a positive number of events"},
	"max-depth":               {min: 1, max: decode.MaxMaxDepth, want: fmt.Sprintf("a nesting depth from 1 to %d", decode.MaxMaxDepth)},
	"max-open-conversations":  {min: 0, want: "0 (no bound) or a positive number of conversations"},
	"commit-interval":         {min: 1, want: "a positive duration"},
	"roll-rows":               {min: 1, want: "a positive number of rows"},
	"roll-bytes":              {min: 1, want: "a positive number of bytes"},
	"roll-age":                {min: 0, want: "0 (never) or a positive duration"},
	"max-open-files":          {min: 1, want: "1 or more"},
	"flush-interval":          {min: 1, want: "a positive duration"},
	"idle-timeout":            {min: 0, want: "0 (only on DELETE or at the end) or a positive duration"},
	"lateness":                {min: 0, want: "0 (never) or a positive duration"},
	"kafka-session-timeout":   {min: 1, want: "a positive duration"},
	"kafka-rebalance-timeout": {min: 1, want: "a positive duration"},
	"shutdown-timeout":        {min: 1, want: "a positive duration"},
	"merge-window":            {min: 0, want: "0 or a positive duration"},
	"max-hold":                {min: 0, want: "0 (no bound) or a positive duration"},
	"merge":                   {one: []string{"auto", "on", "off"}, want: "auto, on or off"},
	"pseudonym-key-id":        {min: 1, want: "a non-empty id"},
	"memory-limit":            {min: 0, want: "0 (no limit) or a number of MiB"},
}

func init() {
	formats := []string{""}
	for _, f := range decode.Formats() {
		formats = append(formats, string(f))
	}
	flagRules["format"] = flagRule{one: formats, want: "one of " + formatList()}
}

// checkFlags returns a message for every flag of fs whose value its rule
// refuses, naming the flag, the value and what it accepts.
func checkFlags(fs *flag.FlagSet) []string {
	var msgs []string
	fs.VisitAll(func(f *flag.Flag) {
		r, ok := flagRules[f.Name]
		if !ok {
			return
		}
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		bad := false
		switch v := g.Get().(type) {
		case int:
			bad = int64(v) < r.min || (r.max != 0 && int64(v) > r.max)
		case int64:
			bad = v < r.min || (r.max != 0 && v > r.max)
		case time.Duration:
			bad = int64(v) < r.min
		case string:
			if r.one != nil {
				bad = !slices.Contains(r.one, v)
			} else {
				bad = int64(len(v)) < r.min
			}
		}
		if bad {
			msgs = append(msgs, fmt.Sprintf("-%s %s: must be %s (see ingest -h)", f.Name, f.Value.String(), r.want))
		}
	})
	return msgs
}
