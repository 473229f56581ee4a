// Command genlog writes a synthetic wire log for the bench/ scripts (see
// package mcptrace/internal/synth).
//
//	go run ./bench/genlog -mib 200 -days 1000 -o /tmp/big.ndjson
package main

import (
	"flag"
	"fmt"
	"os"

	"mcptrace/internal/synth"
)

func main() {
	mib := flag.Int64("mib", 200, "size of the log in MiB")
	n := flag.Int("exchanges", 0, "number of exchanges (0: as many as fit in -mib)")
	days := flag.Int("days", 1, "days the log covers: one date partition each")
	sessions := flag.Int("sessions", 500, "sessions the exchanges are spread over")
	out := flag.String("o", "", "output file")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "genlog: -o FILE is required")
		os.Exit(2)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genlog:", err)
		os.Exit(1)
	}
	ex, written, err := synth.Write(f, synth.Options{Exchanges: *n, Bytes: *mib << 20, Days: *days, Sessions: *sessions})
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genlog:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "genlog: %d exchanges, %d bytes over %d days in %s\n", ex, written, *days, *out)
}
