// Command genlog writes a synthetic, deterministic MCP traffic log for the
// bench/ scripts and for measuring by hand (package
// mcptrace/internal/traffic): a wire log of either side, a HAR document or
// a Claude Desktop log, of a requested size.
//
//	go run ./bench/genlog -mib 1024 -o /tmp/client.ndjson
//	go run ./bench/genlog -mib 1024 -side server -o /tmp/server.ndjson
//	go run ./bench/genlog -exchanges 50000 -side server -o /tmp/s.ndjson   (the same traffic as -exchanges 50000 on the client)
//	go run ./bench/genlog -format har -mib 300 -o /tmp/console.har
//	go run ./bench/genlog -format claude -mib 100 -o /tmp/mcp-server-github.log
//	go run ./bench/genlog -mib 200 -days 1000 -o /tmp/big.ndjson
//	go run ./bench/genlog -shape open-conversations -conversations 200000 -o /tmp/open.ndjson
//	go run ./bench/genlog -shape long-sse -events 1000000 -o /tmp/long.ndjson
//
// Stderr gets one line starting "genlog: N exchanges, ..." (the scripts read
// N from it: keep it the only line that starts "genlog:"), then an indented
// line with the outcomes the log was made to have, which ingest's summary
// of it shows again.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"mcptrace/internal/traffic"
)

func main() {
	format := flag.String("format", "wire", "wire, har or claude")
	side := flag.String("side", "client", "client or server (the server's wirelog middleware; wire only)")
	seed := flag.Int64("seed", 1, "seed: the same seed and flags give the same bytes")
	mib := flag.Int64("mib", 200, "size of the log in MiB (0: no size limit, -exchanges bounds it)")
	n := flag.Int64("exchanges", 0, "stop after this many exchanges, counted on the client's side (0: as many as fit in -mib)")
	days := flag.Int("days", 1, "calendar days the log covers: the traffic in equal slices, one day each (one date partition each)")
	sessions := flag.Int("sessions", 400, "MCP sessions open at once")
	shape := flag.String("shape", "", "'' normal traffic; open-conversations; long-sse")
	conversations := flag.Int("conversations", 1000, "open-conversations: how many")
	events := flag.Int("events", 1000, "long-sse: progress events before the result")
	out := flag.String("o", "", "output file")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "genlog: -o FILE is required (and takes no arguments); -h lists the flags")
		os.Exit(2)
	}
	if *shape == "" && *mib <= 0 && *n <= 0 {
		fmt.Fprintln(os.Stderr, "genlog: set -mib or -exchanges")
		os.Exit(2)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genlog:", err)
		os.Exit(1)
	}
	start := time.Now()
	st, err := traffic.Write(f, traffic.Options{
		Seed: *seed, Bytes: *mib << 20, Exchanges: *n, Format: *format, Side: *side, Sessions: *sessions,
		Days: *days, Shape: *shape, Conversations: *conversations, Events: *events,
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "genlog: writing %s: %v\n", *out, err)
		os.Exit(1)
	}
	took := time.Since(start)
	fmt.Fprintf(os.Stderr, "genlog: %d exchanges, %d records, %d bytes (%.1f KB a record) in %s, written in %s (%.0f MB/s)\n",
		st.Exchanges, st.Records, st.Bytes, float64(st.Bytes)/float64(max(st.Records, 1))/1000, *out, took.Round(time.Millisecond), float64(st.Bytes)/1e6/took.Seconds())
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range st.ByOutcome {
			if !yield(k) {
				return
			}
		}
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s %d", k, st.ByOutcome[k])
	}
	fmt.Fprintf(os.Stderr, "  outcomes:%s\n", b.String())
}
