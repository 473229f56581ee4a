package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"mcptrace/internal/kafkatest"
	"mcptrace/schema"
)

// A Kafka consumer's last log line (stderr not a terminal) carries its own
// ledger: what it committed, which for the only member of a group that
// caught up is what the partitions' ledgers in the dataset
// (.mcptrace/scopes/*/ledger.json) count, and what the dataset holds.
func TestKafkaLastLogLineCarriesTheLedger(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: 2}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: 2, Records: 300, Sessions: 6})
	recs = append(recs, kafkatest.Poison(kafkaTopic, 0, []byte("poison")))
	kafkatest.Produce(t, c.Addrs(), recs)
	out := filepath.Join(t.TempDir(), "out")
	p, code := runIngestProc(t, kafkaArgs(c, "ledger", out, "-kafka-until-caught-up")...)
	if code != ExitQuarantined {
		t.Fatalf("exit %d, want %d\n%s", code, ExitQuarantined, p)
	}
	last, line := lastLogLine(t, p)
	l := last.Ledger
	if last.Message != "ingest finished" || last.Exit != ExitQuarantined || !l.Balanced || !l.Complete || l.Kafka == nil ||
		l.Kafka.Group != "ledger" || len(l.Inputs) != 2 || l.Totals.Records != int64(len(recs)) || l.Totals.Quarantined != 1 {
		t.Fatalf("last line: %s", line)
	}
	paths, err := filepath.Glob(filepath.Join(out, ".mcptrace", "scopes", "*", "ledger.json"))
	if err != nil || len(paths) != 2 {
		t.Fatalf("partition ledgers %v (%v), want 2", paths, err)
	}
	var records, rows, qrows int64
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var pl schema.Ledger
		if err := json.Unmarshal(b, &pl); err != nil {
			t.Fatal(err)
		}
		records += pl.Totals.Records
		rows += pl.Out.Exchanges
		qrows += pl.Out.QuarantineRows
	}
	x, q := checkDataset(t, out)
	if records != l.Totals.Records || rows != l.Out.Exchanges || rows != x || qrows != q || qrows != l.Out.QuarantineRows {
		t.Errorf("the log line's ledger counts %d records, %d exchanges, %d quarantine rows; the partitions' %d, %d, %d; the dataset holds %d and %d",
			l.Totals.Records, l.Out.Exchanges, l.Out.QuarantineRows, records, rows, qrows, x, q)
	}
}
