package pipeline_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/dataset"
	"mcptrace/internal/kafkatest"
	"mcptrace/kafkasrc"
	"mcptrace/objstore"
	"mcptrace/pipeline"
	"mcptrace/schema"
)

// partitionLedgers reads every partition's ledger of the dataset at dir
// (OUT/.mcptrace/scopes/S/ledger.json), checking that each file is the
// copy of the ledger its scope's manifest holds, and that the ledger
// covers exactly the manifest's position.
func partitionLedgers(t *testing.T, dir string) map[string]schema.Ledger {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, ".mcptrace", "scopes", "*", "ledger.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]schema.Ledger{}
	for _, p := range paths {
		file, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := os.ReadFile(filepath.Join(filepath.Dir(p), "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := dataset.ParseManifest(mb)
		if err != nil {
			t.Fatal(err)
		}
		want, err := dataset.LedgerBytes(m.Ledger)
		if err != nil {
			t.Fatalf("%s: the manifest's ledger: %v", p, err)
		}
		if !bytes.Equal(file, want) {
			t.Fatalf("%s is not the ledger its manifest holds:\n%s\nmanifest:\n%s", p, file, want)
		}
		var l schema.Ledger
		if err := json.Unmarshal(file, &l); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if l.Kafka == nil || len(l.Inputs) != 1 || l.Inputs[0].Kafka == nil {
			t.Fatalf("%s: not a partition's ledger: %s", p, file)
		}
		in := l.Inputs[0]
		e := m.Sources[in.ID]
		if e == nil || e.Position.End != in.Kafka.NextOffset {
			t.Fatalf("%s: the ledger counts up to offset %d, the manifest holds %+v", p, in.Kafka.NextOffset, e)
		}
		out[l.Kafka.Scope] = l
	}
	return out
}

// checkLedgers checks each partition's ledger of the dataset at dir
// against the dataset's rows (DuckDB over data, the dataset's or a
// download of it): it balances, its rows are the partition's rows, and,
// when records gives the partition's record count, it counts every
// record once, up to the end offset.
func checkLedgers(t *testing.T, db *sql.DB, dir, data, topic string, end kafkatest.Offsets, records map[int32]int64) map[string]schema.Ledger {
	t.Helper()
	ls := partitionLedgers(t, dir)
	if len(ls) != len(end[topic]) {
		t.Fatalf("%d partition ledgers, the topic has %d partitions", len(ls), len(end[topic]))
	}
	count := func(table, source string) int64 {
		var n int64
		q := "SELECT count(*) FROM read_parquet('" + filepath.Join(data, table, "*", "*.parquet") + "') WHERE source = ?"
		if err := db.QueryRow(q, source).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for p, e := range end[topic] {
		tp := kafkasrc.TopicPartition{Topic: topic, Partition: int(p)}
		l, ok := ls[pipeline.ScopeName(tp)]
		if !ok {
			t.Fatalf("no ledger for %s", tp)
		}
		in := l.Inputs[0]
		if !l.Balanced || !in.Balanced() || !l.Totals.Balanced() || l.Totals.Records != in.Records {
			t.Errorf("%s: the ledger does not balance: %+v", tp, l)
		}
		if lim := l.Limits; lim.MaxLine <= 0 || lim.MaxDocument <= 0 || lim.MaxBody <= 0 || lim.MaxSSEEvents <= 0 || lim.MaxDepth <= 0 {
			t.Errorf("%s: the ledger does not say which limits were applied: %+v", tp, lim)
		}
		if in.ID != pipeline.KafkaInputID(tp) || in.Kafka.Topic != topic || in.Kafka.Partition != int(p) {
			t.Errorf("%s: ledger of %s (%+v)", tp, in.ID, in.Kafka)
		}
		if want, ok := records[p]; ok {
			if in.Kafka.NextOffset != e || in.Kafka.FirstOffset != 0 || in.Kafka.Messages != e {
				t.Errorf("%s: the ledger counts offsets %d-%d (%d messages), the partition ends at %d", tp, in.Kafka.FirstOffset, in.Kafka.NextOffset, in.Kafka.Messages, e)
			}
			if in.Records != want {
				t.Errorf("%s: the ledger counts %d records, %d were produced", tp, in.Records, want)
			}
			if l.Out.QuarantineRows != in.Quarantined {
				t.Errorf("%s: %d quarantine rows out, %d records quarantined", tp, l.Out.QuarantineRows, in.Quarantined)
			}
		}
		if rows := count("exchanges", in.ID); rows != l.Out.Exchanges || rows == 0 {
			t.Errorf("%s: the dataset holds %d exchanges of the partition, its ledger %d", tp, rows, l.Out.Exchanges)
		}
		if rows := count("quarantine", in.ID); rows != l.Out.QuarantineRows {
			t.Errorf("%s: the dataset holds %d quarantine rows of the partition, its ledger %d", tp, rows, l.Out.QuarantineRows)
		}
		var byOutcome int64
		for _, n := range l.Out.ByOutcome {
			byOutcome += n
		}
		if byOutcome != l.Out.Exchanges {
			t.Errorf("%s: %d exchanges by outcome, %d in all", tp, byOutcome, l.Out.Exchanges)
		}
		if l.Kafka.Commits == 0 || l.Kafka.Writer.PID != os.Getpid() || l.StartedAt.IsZero() || l.EndedAt.Before(l.StartedAt) {
			t.Errorf("%s: ledger's commits, writer or times: %+v, %v-%v", tp, l.Kafka, l.StartedAt, l.EndedAt)
		}
	}
	return ls
}

// perPartition counts the produced records of each partition of topic.
func perPartition(recs []kafkatest.Record, topic string) map[int32]int64 {
	n := map[int32]int64{}
	for _, r := range recs {
		if r.Topic == topic {
			n[r.Partition]++
		}
	}
	return n
}

func ledgerConsumer(t *testing.T, c *kafkatest.Cluster, group, out string, store *objstore.Store) (*pipeline.Summary, error) {
	cfg := pipeline.Config{OutDir: out, Workers: 2, Pseudonyms: testPseudonyms(t), CommitInterval: 100 * time.Millisecond, Log: zerolog.Nop()}
	ko := pipeline.KafkaOptions{UntilCaughtUp: true, Store: store, Consumer: kafkasrc.Config{Brokers: c.Addrs(), Topics: []string{"mcp"}, Group: group,
		SessionTimeout: 2 * time.Second, HeartbeatInterval: 200 * time.Millisecond, RebalanceTimeout: 5 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return pipeline.RunKafka(ctx, cfg, ko)
}

// Two members of a group write one dataset side by side: each partition's
// ledger is its own file (its scope's), none overwrites another, each
// balances, and together they count every record once and every row the
// dataset holds; the members' own ledgers add up to the same. A restart
// after more records continues each partition's ledger.
func TestKafkaLedgerTwoMembersAndRestart(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"mcp": 3}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 3, Records: 2400, Sessions: 30})
	recs = append(recs, kafkatest.Poison("mcp", 1, []byte("poison")),
		kafkatest.Record{Topic: "mcp", Partition: 2, Key: []byte("blank"), Value: []byte("  \n")})
	kafkatest.Produce(t, c.Addrs(), recs)
	out := t.TempDir()
	var wg sync.WaitGroup
	sums := make([]*pipeline.Summary, 2)
	errs := make([]error, 2)
	for i := range sums {
		wg.Add(1)
		go func() { defer wg.Done(); sums[i], errs[i] = ledgerConsumer(t, c, "g", out, nil) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	end := kafkatest.End(t, c.Addrs(), "mcp")
	db := duck(t)
	ls := checkLedgers(t, db, out, out, "mcp", end, perPartition(recs, "mcp"))
	if l := ls[pipeline.ScopeName(kafkasrc.TopicPartition{Topic: "mcp", Partition: 1})]; l.Totals.QuarantinedBy[pipeline.ReasonUnknownFormat] != 1 {
		t.Errorf("partition 1's ledger: quarantined %v, want the poison message as %s", l.Totals.QuarantinedBy, pipeline.ReasonUnknownFormat)
	}
	if l := ls[pipeline.ScopeName(kafkasrc.TopicPartition{Topic: "mcp", Partition: 2})]; l.Totals.SkippedBy["blank"] != 1 {
		t.Errorf("partition 2's ledger: skipped %v, want the blank message", l.Totals.SkippedBy)
	}
	// The members' own ledgers (their last log lines): what each
	// committed, adding up to the partitions'.
	var procRecords, procRows, procNotes, partNotes, corrNotes, readRecords int64
	for i, s := range sums {
		l := s.Ledger
		if l.Version != schema.LedgerVersion || l.Kafka == nil || l.Kafka.Group != "g" || !l.Balanced || !l.Complete {
			t.Errorf("member %d's ledger: %+v", i, l)
		}
		procRecords += l.Totals.Records
		procRows += l.Out.Exchanges
		procNotes += l.Out.Notifications
		corrNotes += s.Correlation.Notifications
		readRecords += s.Records
	}
	var rows int64
	var partRecords int64
	for _, l := range ls {
		rows += l.Out.Exchanges
		partRecords += l.Totals.Records
		partNotes += l.Out.Notifications
	}
	if procRecords != int64(len(recs)) || partRecords != int64(len(recs)) || procRows != rows {
		t.Errorf("members committed %d records and %d rows, the partitions' ledgers count %d and %d, %d were produced", procRecords, procRows, partRecords, rows, len(recs))
	}
	// Notifications are counted per record as the correlator counts them:
	// when each member's correlators saw exactly what it committed (no
	// record read twice: no rebalance moved a partition part-read), the
	// same count; otherwise the correlators saw more.
	if procNotes != partNotes || readRecords == int64(len(recs)) && procNotes != corrNotes || corrNotes < procNotes {
		t.Errorf("notifications: members' ledgers %d, partitions' %d, correlators %d (records read %d, produced %d)", procNotes, partNotes, corrNotes, readRecords, len(recs))
	}
	t.Logf("%d records, %d exchanges, %d notifications; members committed %d and %d records", len(recs), rows, partNotes, sums[0].Ledger.Totals.Records, sums[1].Ledger.Totals.Records)

	// More records, one member: each partition's ledger goes on from
	// where it was, counting the new records once.
	more := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 3, Records: 600, Sessions: 10, Seed: 2})
	kafkatest.Produce(t, c.Addrs(), more)
	s3, err := ledgerConsumer(t, c, "g", out, nil)
	if err != nil {
		t.Fatal(err)
	}
	end = kafkatest.End(t, c.Addrs(), "mcp")
	want := perPartition(recs, "mcp")
	for p, n := range perPartition(more, "mcp") {
		want[p] += n
	}
	after := checkLedgers(t, db, out, out, "mcp", end, want)
	for scope, l := range after {
		before := ls[scope]
		if l.Kafka.Commits <= before.Kafka.Commits || !l.StartedAt.Equal(before.StartedAt) {
			t.Errorf("%s: the restart did not continue the ledger: commits %d then %d, started %v then %v", scope, before.Kafka.Commits, l.Kafka.Commits, before.StartedAt, l.StartedAt)
		}
	}
	if s3.Ledger.Totals.Records != int64(len(more)) {
		t.Errorf("the restarted member committed %d records, %d were produced since", s3.Ledger.Totals.Records, len(more))
	}
}

// A consumer stopped while conversations still hold its partitions'
// commit back has written rows past the committed position: its ledgers
// count the records up to the position only, and the next run, which
// reads the rest again, counts each record once (the rows it meets again
// are not written twice: known by key, or their records skipped as
// already_written).
func TestKafkaLedgerReplayCountsOnce(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"mcp": 2}})
	// Sessions active over two days of event time: open conversations
	// hold the commit near their start.
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 2, Records: 3000, Sessions: 8, Days: 2})
	kafkatest.Produce(t, c.Addrs(), recs)
	out := t.TempDir()
	// A bound of an hour of event time moves the commit, but not to the
	// end: what is open at the stop holds it.
	first := consumeThenStop(t, c, "g", out, int64(len(recs)), time.Hour)
	end := kafkatest.End(t, c.Addrs(), "mcp")
	db := duck(t)
	held := checkLedgers(t, db, out, out, "mcp", end, nil)
	committed := kafkatest.Committed(t, c.Addrs(), "g", "mcp")
	var counted int64
	for p := range end["mcp"] {
		l := held[pipeline.ScopeName(kafkasrc.TopicPartition{Topic: "mcp", Partition: int(p)})]
		in := l.Inputs[0]
		// One record a message: what the ledger counts is exactly the
		// messages below the committed position.
		if in.Records != in.Kafka.NextOffset-in.Kafka.FirstOffset || in.Kafka.NextOffset != committed["mcp"][p] {
			t.Errorf("partition %d: %d records counted for offsets %d-%d, the group committed %d", p, in.Records, in.Kafka.FirstOffset, in.Kafka.NextOffset, committed["mcp"][p])
		}
		counted += in.Records
	}
	if counted == 0 || counted == int64(len(recs)) {
		t.Fatalf("the stopped run committed %d of %d records: the test proves nothing", counted, len(recs))
	}
	if first.Ledger.Totals.Records != counted || first.Records <= counted {
		t.Errorf("the stopped member read %d records and its ledger counts %d committed, the partitions' %d", first.Records, first.Ledger.Totals.Records, counted)
	}
	// The rest, until caught up: every record counted once over both runs.
	second, err := ledgerConsumer(t, c, "g", out, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := checkLedgers(t, db, out, out, "mcp", end, perPartition(recs, "mcp"))
	var already int64
	for _, l := range done {
		already += l.Totals.SkippedBy["already_written"]
	}
	if already+second.Deduplicated == 0 {
		t.Error("the second run met no row of the first again: the first wrote none past its position, the test proves nothing")
	}
	if second.Ledger.Totals.Records != int64(len(recs))-counted {
		t.Errorf("the second run committed %d records, %d were left", second.Ledger.Totals.Records, int64(len(recs))-counted)
	}
	var rows, distinct int64
	if err := db.QueryRow("SELECT count(*), count(DISTINCT exchange_id) FROM read_parquet('"+filepath.Join(out, "exchanges", "*", "*.parquet")+"')").Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != distinct || rows != first.Ledger.Out.Exchanges+second.Ledger.Out.Exchanges {
		t.Errorf("%d rows (%d distinct); the runs' ledgers wrote %d and %d", rows, distinct, first.Ledger.Out.Exchanges, second.Ledger.Out.Exchanges)
	}
	t.Logf("first run: %d of %d records committed, %d rows; second: %d records, %d skipped as already written, %d rows not written twice",
		counted, len(recs), first.Ledger.Out.Exchanges, second.Ledger.Totals.Records, already, second.Deduplicated)
}

// With the dataset in object storage, each partition's ledger is in the
// bucket next to its manifest, which holds the same ledger; a consumer on
// another machine (an empty working copy) continues it from the bucket.
func TestKafkaLedgerS3(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"mcp": 2}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 2, Records: 1500, Sessions: 20})
	kafkatest.Produce(t, c.Addrs(), recs)
	s3 := startReviewS3(t, "traces")
	st := reviewStore(t, s3, "s3://traces/ds")
	if _, err := ledgerConsumer(t, c, "g", t.TempDir(), st); err != nil {
		t.Fatal(err)
	}
	db := duck(t)
	download := func() string {
		dir := t.TempDir()
		if err := st.Download(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	end := kafkatest.End(t, c.Addrs(), "mcp")
	down := download()
	checkLedgers(t, db, down, down, "mcp", end, perPartition(recs, "mcp"))

	more := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 2, Records: 500, Sessions: 5, Seed: 3})
	kafkatest.Produce(t, c.Addrs(), more)
	if _, err := ledgerConsumer(t, c, "g", t.TempDir(), st); err != nil {
		t.Fatal(err)
	}
	end = kafkatest.End(t, c.Addrs(), "mcp")
	want := perPartition(recs, "mcp")
	for p, n := range perPartition(more, "mcp") {
		want[p] += n
	}
	down = download()
	checkLedgers(t, db, down, down, "mcp", end, want)
}
