package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tidwall/gjson"

	"mcptrace/decode"
	"mcptrace/input"
	"mcptrace/internal/traffic"
	"mcptrace/redact"
)

// writeBenchLog writes a realistic client-side wire log of n exchanges over
// 400 interleaved sessions (internal/traffic, seed 1): JSON and SSE
// responses, tool and JSON-RPC errors, retries, cut streams, credentials.
func writeBenchLog(tb testing.TB, n int) (string, int64) {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "bench.ndjson")
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := traffic.Write(f, traffic.Options{Seed: 1, Exchanges: int64(n), Sessions: 400})
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		tb.Fatal(err)
	}
	if st.Exchanges != int64(n) {
		tb.Fatalf("the generator wrote %d exchanges, not %d", st.Exchanges, n)
	}
	return p, st.Bytes
}

const benchExchanges = 20000 // about 60 MB

// BenchmarkReadLines is the baseline: read the file and split it into lines.
func BenchmarkReadLines(b *testing.B) {
	p, size := writeBenchLog(b, benchExchanges)
	b.SetBytes(size)
	for b.Loop() {
		r, err := input.Open(input.Input{Name: p, Path: p, Kind: input.File})
		if err != nil {
			b.Fatal(err)
		}
		lr := decode.NewLineReader(r, 16<<20)
		for {
			if _, _, err := lr.Next(); err == io.EOF {
				break
			}
		}
		r.Close()
	}
}

// BenchmarkValidateLines is a second baseline: read, split and run gjson's
// validator over every line (the least any JSON decoder must do).
func BenchmarkValidateLines(b *testing.B) {
	p, size := writeBenchLog(b, benchExchanges)
	b.SetBytes(size)
	for b.Loop() {
		r, _ := input.Open(input.Input{Name: p, Path: p, Kind: input.File})
		lr := decode.NewLineReader(r, 16<<20)
		for {
			line, _, err := lr.Next()
			if err == io.EOF {
				break
			}
			if !gjson.ValidBytes(line) {
				b.Fatal("invalid line")
			}
		}
		r.Close()
	}
}

// BenchmarkIngest is the whole pipeline: decode, correlate, classify, redact
// and write Parquet.
func BenchmarkIngest(b *testing.B) { benchIngest(b, nil) }

// BenchmarkIngestNoRedaction is the same run with every field kept: the
// baseline for what redaction costs.
func BenchmarkIngestNoRedaction(b *testing.B) { benchIngest(b, redact.NoRedaction()) }

func benchIngest(b *testing.B, policy *redact.Policy) {
	p, size := writeBenchLog(b, benchExchanges)
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	b.SetBytes(size)
	for b.Loop() {
		sum, err := Run(context.Background(), Config{Inputs: []string{p}, OutDir: b.TempDir(), Pseudonyms: key, Policy: policy, Log: zerolog.Nop()})
		if err != nil {
			b.Fatal(err)
		}
		if sum.Exchanges != benchExchanges || !sum.Balanced() {
			b.Fatalf("exchanges %d", sum.Exchanges)
		}
	}
	b.ReportMetric(float64(benchExchanges)*float64(b.N)/b.Elapsed().Seconds(), "exchanges/s")
}

// writeClaudeLog writes a Claude Desktop per-server log of n tools/call
// exchanges on one server process.
func writeClaudeLog(tb testing.TB, n int) (string, int64) {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "mcp-server-bench.log")
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "2026-10-17T10:00:00.000Z [bench] [info] Initializing server... { metadata: undefined }")
	for i := 0; i < n; i++ {
		ts := fmt.Sprintf("2026-10-17T10:%02d:%02d.%03dZ", (i/60000)%60, (i/1000)%60, i%1000)
		fmt.Fprintf(w, `%s [bench] [info] Message from client: {"method":"tools/call","params":{"name":"search","arguments":{"query":"quarterly report %d"}},"jsonrpc":"2.0","id":%d} { metadata: undefined }`+"\n", ts, i, i)
		if i%5 == 0 {
			fmt.Fprintf(w, `%s [bench] [info] Message from server: {"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"upstream index unavailable"}],"isError":true}} { metadata: undefined }`+"\n", ts, i)
		} else {
			fmt.Fprintf(w, `%s [bench] [info] Message from server: {"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"12 documents found"}]}} { metadata: undefined }`+"\n", ts, i)
		}
	}
	w.Flush()
	f.Close()
	st, _ := os.Stat(p)
	return p, st.Size()
}

// BenchmarkIngestClaudeDesktop is the whole pipeline on a Claude Desktop
// log, decoded per file rather than in parallel chunks.
func BenchmarkIngestClaudeDesktop(b *testing.B) {
	p, size := writeClaudeLog(b, benchExchanges)
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	b.SetBytes(size)
	for b.Loop() {
		sum, err := Run(context.Background(), Config{Inputs: []string{p}, OutDir: b.TempDir(), Pseudonyms: key, Log: zerolog.Nop()})
		if err != nil {
			b.Fatal(err)
		}
		if sum.Exchanges != benchExchanges || !sum.Balanced() {
			b.Fatalf("exchanges %d", sum.Exchanges)
		}
	}
	b.ReportMetric(float64(benchExchanges)*float64(b.N)/b.Elapsed().Seconds(), "exchanges/s")
}
