package pipeline_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/internal/synth"
	"mcptrace/pipeline"
)

// shiftTS moves every ts/end_ts of a wire log by d (a server whose clock is ahead).
func shiftTS(t *testing.T, b []byte, d time.Duration) []byte {
	re := regexp.MustCompile(`"(ts|end_ts)":"([^"]+)"`)
	return re.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := re.FindSubmatch(m)
		ts, err := time.Parse(time.RFC3339Nano, string(sub[2]))
		if err != nil {
			t.Fatal(err)
		}
		return []byte(`"` + string(sub[1]) + `":"` + ts.Add(d).UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"`)
	})
}

// reading merged wire files side by side by their raw ts makes
// a server log whose clock is ahead by more than -lateness arrive after its
// client rows; the merge window covers the largest skew the merge
// estimates (an hour), so every pair still merges, with or without an
// empty file among the inputs.
func TestInterleavedMergeLosesSkewedPairs(t *testing.T) {
	skew := 20 * time.Minute
	if s := os.Getenv("REVIEW2_SKEW"); s != "" {
		skew, _ = time.ParseDuration(s)
	}
	dir := t.TempDir()
	var b bytes.Buffer
	if _, _, err := synth.Write(&b, synth.Options{Exchanges: 3000, Sessions: 20}); err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(dir, "client.ndjson")
	server := filepath.Join(dir, "server.ndjson")
	os.WriteFile(client, b.Bytes(), 0o644)
	srv := bytes.ReplaceAll(b.Bytes(), []byte(`"side":"client"`), []byte(`"side":"server"`))
	os.WriteFile(server, shiftTS(t, srv, skew), 0o644)
	empty := filepath.Join(dir, "empty.ndjson")
	os.WriteFile(empty, nil, 0o644)
	run := func(out string, ins ...string) *pipeline.Summary {
		sum, err := pipeline.Run(context.Background(), pipeline.Config{Inputs: ins, OutDir: filepath.Join(dir, out),
			Pseudonyms: testKey(t), Lateness: 10 * time.Minute, IdleTimeout: 30 * time.Minute, Log: zerolog.Nop(), Merge: "on"})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	held := run("held", client, server, empty) // an empty input: not all wire, rows held to the end
	inter := run("inter", client, server)
	t.Logf("held to the end: %d merged; read side by side: %d merged (held max %d)", held.Merged, inter.Merged, inter.MergeHeldMax)
	if inter.Merged != 3000 || held.Merged != 3000 {
		t.Errorf("a server log %v ahead: %d and %d of 3000 pairs merged (read side by side, with an empty file named too)", skew, inter.Merged, held.Merged)
	}
}
