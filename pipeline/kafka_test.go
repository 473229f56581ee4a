package pipeline_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/internal/kafkatest"
	"mcptrace/kafkasrc"
	"mcptrace/pipeline"
	"mcptrace/redact"
)

// kafkaRun consumes the cluster's topic until caught up into out.
func runKafkaUntilCaughtUp(t *testing.T, c *kafkatest.Cluster, group, out string, topics ...string) *pipeline.Summary {
	t.Helper()
	cfg := pipeline.Config{OutDir: out, Workers: 2, Pseudonyms: testPseudonyms(t), CommitInterval: 200 * time.Millisecond, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.DebugLevel)}
	ko := pipeline.KafkaOptions{UntilCaughtUp: true, Consumer: kafkasrc.Config{Brokers: c.Addrs(), Topics: topics, Group: group,
		SessionTimeout: 2 * time.Second, HeartbeatInterval: 200 * time.Millisecond, RebalanceTimeout: 5 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sum, err := pipeline.RunKafka(ctx, cfg, ko)
	if err != nil {
		t.Fatalf("RunKafka: %v", err)
	}
	return sum
}

func TestKafkaUntilCaughtUpExactlyOnce(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"mcp": 3}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 3, Records: 3000, Sessions: 40})
	recs = append(recs, kafkatest.Poison("mcp", 1, []byte("poison")))
	kafkatest.Produce(t, c.Addrs(), recs)
	out := t.TempDir()
	sum := runKafkaUntilCaughtUp(t, c, "g1", out, "mcp")
	if !sum.Balanced() {
		t.Fatalf("summary does not balance: %+v", sum)
	}
	if sum.Records != int64(len(recs)) {
		t.Fatalf("read %d records, produced %d", sum.Records, len(recs))
	}
	end := kafkatest.End(t, c.Addrs(), "mcp")
	got := kafkatest.Committed(t, c.Addrs(), "g1", "mcp")
	if !kafkatest.Reached(got, end) {
		t.Fatalf("committed %s, end %s", kafkatest.Format(got), kafkatest.Format(end))
	}
	db := duck(t)
	var rows, distinct int64
	glob := filepath.Join(out, "exchanges", "*", "*.parquet")
	if err := db.QueryRow("SELECT count(*), count(DISTINCT exchange_id) FROM read_parquet('"+glob+"')").Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != sum.Exchanges || rows != distinct || rows == 0 {
		t.Fatalf("dataset has %d rows (%d distinct), the run wrote %d", rows, distinct, sum.Exchanges)
	}
	var qsrc string
	var qline int64
	if err := db.QueryRow("SELECT source, line FROM read_parquet('"+filepath.Join(out, "quarantine", "*", "*.parquet")+"')").Scan(&qsrc, &qline); err != nil {
		t.Fatal(err)
	}
	if qsrc != "kafka:mcp/1" || qline != end["mcp"][1]-1 {
		t.Fatalf("poison message quarantined at %s line %d, want kafka:mcp/1 offset %d", qsrc, qline, end["mcp"][1]-1)
	}
	// A second run of the same group reads nothing and writes nothing.
	sum2 := runKafkaUntilCaughtUp(t, c, "g1", out, "mcp")
	if sum2.Records != 0 || sum2.Exchanges != 0 {
		t.Fatalf("a caught-up group read %d records again", sum2.Records)
	}
	var rows2 int64
	db.QueryRow("SELECT count(*) FROM read_parquet('" + glob + "')").Scan(&rows2)
	if rows2 != rows {
		t.Fatalf("rows %d after a second run, %d before", rows2, rows)
	}
	_ = sql.ErrNoRows
}

func testPseudonyms(t *testing.T) *redact.Pseudonymizer {
	p, err := redact.NewPseudonymizer("k1", []byte("mcptrace-test-key-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// consumeThenStop runs a long-lived consumer until it has read every
// produced record and committed at least once more, then stops it softly.
func consumeThenStop(t *testing.T, c *kafkatest.Cluster, group, out string, records int64, maxHold time.Duration) *pipeline.Summary {
	t.Helper()
	stop := make(chan struct{})
	var readCount atomic.Int64
	cfg := pipeline.Config{OutDir: out, Workers: 2, Pseudonyms: testPseudonyms(t), CommitInterval: 100 * time.Millisecond, Stop: stop, IdleTimeout: 30 * time.Minute,
		Progress: func(p pipeline.Progress) { readCount.Store(p.Records) }, ProgressEvery: 20 * time.Millisecond, Log: zerolog.Nop()}
	ko := pipeline.KafkaOptions{MaxHold: maxHold, Consumer: kafkasrc.Config{Brokers: c.Addrs(), Topics: []string{"mcp"}, Group: group,
		SessionTimeout: 2 * time.Second, HeartbeatInterval: 200 * time.Millisecond, RebalanceTimeout: 5 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan struct{})
	var sum *pipeline.Summary
	var err error
	go func() { defer close(done); sum, err = pipeline.RunKafka(ctx, cfg, ko) }()
	for readCount.Load() < records {
		select {
		case <-done:
			t.Fatalf("consumer ended early: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	time.Sleep(500 * time.Millisecond) // commits at the commit interval
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("RunKafka: %v", err)
	}
	return sum
}

func TestKafkaMaxHoldMovesTheCommit(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"mcp": 2}})
	// Sessions active over the whole stream: two days of event time.
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 2, Records: 4000, Sessions: 8, Days: 2})
	kafkatest.Produce(t, c.Addrs(), recs)
	end := kafkatest.End(t, c.Addrs(), "mcp")

	// No bound: the open sessions hold the commit near their start.
	consumeThenStop(t, c, "unbounded", t.TempDir(), int64(len(recs)), -1)
	held := kafkatest.Committed(t, c.Addrs(), "unbounded", "mcp")
	// A bound of 1 h of event time: conversations are cut, what is open in
	// them is written with hold_cut, and the commit moves on.
	out := t.TempDir()
	sum := consumeThenStop(t, c, "bounded", out, int64(len(recs)), time.Hour)
	moved := kafkatest.Committed(t, c.Addrs(), "bounded", "mcp")
	for p, e := range end["mcp"] {
		if held["mcp"][p] > e/2 {
			t.Errorf("partition %d: without -max-hold the commit reached %d of %d: the sessions did not hold it (the test proves nothing)", p, held["mcp"][p], e)
		}
		if moved["mcp"][p] < e*3/4 || moved["mcp"][p] <= held["mcp"][p] {
			t.Errorf("partition %d: with -max-hold 1h the commit is at %d of %d", p, moved["mcp"][p], e)
		}
	}
	t.Logf("hold cuts %d, closed %d, held for replay %d, committed %v", sum.Correlation.HoldCuts, sum.Correlation.Closed, sum.HeldForReplay, moved)
	if sum.Correlation.HoldCuts == 0 {
		t.Fatal("no conversation was cut")
	}
	db := duck(t)
	var rows, distinct int64
	glob := filepath.Join(out, "exchanges", "*", "*.parquet")
	if err := db.QueryRow("SELECT count(*), count(DISTINCT exchange_id) FROM read_parquet('"+glob+"')").Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != distinct || rows == 0 {
		t.Fatalf("%d rows, %d distinct", rows, distinct)
	}
	// (Which rows a cut marks is tested in package correlate: those still
	// open at the cut; synth's exchanges all end before it.)
}
