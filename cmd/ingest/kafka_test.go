package main

// Kafka acceptance tests (issue 9): the real ingest binary as a consumer of
// an in-process Kafka-protocol broker (kfake, through internal/kafkatest).
// Each test compares the dataset the consumers wrote with what the same
// records give when ingested from files: the same verdicts, every exchange
// once.

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcptrace/dataset"
	"mcptrace/internal/kafkatest"
)

const kafkaTopic = "mcp"

// kafkaArgs are a consumer's flags for a test: short timings so that
// rebalances after a kill take seconds.
func kafkaArgs(c *kafkatest.Cluster, group, out string, extra ...string) []string {
	args := []string{"-kafka-brokers", strings.Join(c.Addrs(), ","), "-kafka-topic", kafkaTopic, "-kafka-group", group,
		"-out", out, "-kafka-session-timeout", "2s", "-kafka-rebalance-timeout", "6s", "-commit-interval", "300ms", "-flush-interval", "200ms", "-workers", "2"}
	return append(args, extra...)
}

// fileBaseline ingests the records from files, one per partition, into a
// dataset of its own.
func fileBaseline(t *testing.T, recs []kafkatest.Record) string {
	t.Helper()
	files := kafkatest.WriteFiles(t, t.TempDir(), recs)
	var paths []string
	for _, p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	out := t.TempDir()
	p, code := runIngestProc(t, append([]string{"-out", out, "-workers", "2"}, paths...)...)
	if code != ExitOK && code != ExitQuarantined { // poison records are quarantined
		t.Fatalf("file baseline: exit %d\n%s", code, p)
	}
	return out
}

// verdictCols are what both paths must agree on for every exchange (ids
// differ: a file's identity is its path, a partition's is topic/partition).
const verdictCols = `session_id, jsonrpc_id, method, tool_name, outcome, layer, reason, post_count,
	CAST(http_statuses AS VARCHAR) AS statuses, retry_origin, started_at, ended_at, is_error, late, session_expired`

// sameVerdicts fails unless the two datasets hold the same multiset of
// exchanges (by verdictCols) and kafkaOut holds every exchange_id once.
func sameVerdicts(t *testing.T, kafkaOut, fileOut string) int64 {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k := fmt.Sprintf("read_parquet('%s')", filepath.Join(kafkaOut, "exchanges", "*", "*.parquet"))
	f := fmt.Sprintf("read_parquet('%s')", filepath.Join(fileOut, "exchanges", "*", "*.parquet"))
	var rows, ids int64
	if err := db.QueryRow("SELECT count(*), count(DISTINCT exchange_id) FROM "+k).Scan(&rows, &ids); err != nil {
		t.Fatal(err)
	}
	if rows != ids {
		t.Errorf("kafka dataset: %d rows but %d distinct exchange ids: %d doubled", rows, ids, rows-ids)
	}
	var frows int64
	if err := db.QueryRow("SELECT count(*) FROM " + f).Scan(&frows); err != nil {
		t.Fatal(err)
	}
	if rows != frows {
		t.Errorf("kafka dataset has %d exchanges, the same records from files %d", rows, frows)
	}
	for _, q := range []struct{ name, a, b string }{{"only in the kafka dataset", k, f}, {"only in the file dataset", f, k}} {
		var n int64
		query := fmt.Sprintf("SELECT count(*) FROM (SELECT %s FROM %s EXCEPT ALL SELECT %s FROM %s)", verdictCols, q.a, verdictCols, q.b)
		if err := db.QueryRow(query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			var sample string
			db.QueryRow(fmt.Sprintf("SELECT string_agg(x, E'\\n') FROM (SELECT CAST(ROW(%s) AS VARCHAR) x FROM (SELECT %s FROM %s EXCEPT ALL SELECT %s FROM %s) LIMIT 5)",
				"session_id, jsonrpc_id, method, outcome, reason, post_count, statuses, started_at", verdictCols, q.a, verdictCols, q.b)).Scan(&sample)
			t.Errorf("%d exchanges %s, e.g.\n%s", n, q.name, sample)
		}
	}
	return rows
}

// checkCommittedAtEnd fails unless the group has committed every
// partition's end offset.
func checkCommittedAtEnd(t *testing.T, c *kafkatest.Cluster, group string) {
	t.Helper()
	end := kafkatest.End(t, c.Addrs(), kafkaTopic)
	got := kafkatest.Committed(t, c.Addrs(), group, kafkaTopic)
	for p, e := range end[kafkaTopic] {
		if got[kafkaTopic][p] != e {
			t.Errorf("partition %d: committed %d, end offset %d", p, got[kafkaTopic][p], e)
		}
	}
}

// checkDurableCommitted fails unless every partition's committed offset
// equals the position its dataset scope records (everything written is
// committed, nothing committed that is not written).
func checkDurableCommitted(t *testing.T, c *kafkatest.Cluster, group, out string) {
	t.Helper()
	m, err := dataset.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	got := kafkatest.Committed(t, c.Addrs(), group, kafkaTopic)
	for p, off := range got[kafkaTopic] {
		id := "kafka:" + kafkaTopic + "/" + fmt.Sprint(p)
		e := m.Sources[id]
		if e == nil {
			t.Errorf("%s: committed %d but the dataset does not know the partition", id, off)
			continue
		}
		if e.Position.End != off {
			t.Errorf("%s: committed offset %d, dataset durable to %d", id, off, e.Position.End)
		}
	}
}

func TestKafkaTwoConsumers100k(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: 6}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: 6, Records: 100000, Sessions: 600})
	// A poison message in the middle of partition 2: quarantined with its
	// coordinates, and the partition flows on.
	half := len(recs) / 2
	poison := kafkatest.Poison(kafkaTopic, 2, []byte("poison"))
	recs = append(recs[:half:half], append([]kafkatest.Record{poison}, recs[half:]...)...)
	offsets := kafkatest.Produce(t, c.Addrs(), recs)
	base := fileBaseline(t, recs)
	out := t.TempDir()
	a := startIngest(t, kafkaArgs(c, "two", out, "-kafka-until-caught-up")...)
	b := startIngest(t, kafkaArgs(c, "two", out, "-kafka-until-caught-up")...)
	for _, p := range []*ingestProc{a, b} {
		// 6 for the member that quarantined the poison record.
		if code := p.wait(t, 5*time.Minute); code != ExitOK && code != ExitQuarantined {
			t.Fatalf("consumer exited %d\n%s", code, p)
		}
	}
	checkCommittedAtEnd(t, c, "two")
	checkDurableCommitted(t, c, "two", out)
	if t.Failed() {
		t.Logf("consumer a:\n%s\nconsumer b:\n%s", a, b)
	}
	n := sameVerdicts(t, out, base)
	t.Logf("%d exchanges, exactly once", n)
	exch, quar := checkDataset(t, out)
	if exch != n || quar != 1 {
		t.Errorf("dataset files hold %d exchanges and %d quarantine rows, want %d and 1", exch, quar, n)
	}
	db, _ := sql.Open("duckdb", "")
	defer db.Close()
	var src string
	var line int64
	if err := db.QueryRow("SELECT source, line FROM read_parquet('"+filepath.Join(out, "quarantine", "*", "*.parquet")+"')").Scan(&src, &line); err != nil {
		t.Fatal(err)
	}
	if src != "kafka:mcp/2" || line != offsets[half] {
		t.Errorf("poison quarantined as %s line %d, want kafka:mcp/2 offset %d", src, line, offsets[half])
	}
}

// produceBatches splits records into n batches (in order) for tests that
// produce while consumers run.
func batches(recs []kafkatest.Record, n int) [][]kafkatest.Record {
	var out [][]kafkatest.Record
	per := (len(recs) + n - 1) / n
	for i := 0; i < len(recs); i += per {
		out = append(out, recs[i:min(i+per, len(recs))])
	}
	return out
}

// finish runs one consumer until caught up: what open conversations held
// is finished, written and committed.
func finish(t *testing.T, c *kafkatest.Cluster, group, out string) {
	t.Helper()
	p, code := runIngestProc(t, kafkaArgs(c, group, out, "-kafka-until-caught-up")...)
	if code != ExitOK && code != ExitQuarantined { // 6 when what it read held a poison record
		t.Fatalf("final consumer exited %d\n%s", code, p)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("final consumer:\n%s", p)
		}
	})
}

func TestKafkaSIGKILLAndRestart(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: 6}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: 6, Records: 30000, Sessions: 200})
	base := fileBaseline(t, recs)
	out := t.TempDir()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	parts := batches(recs, 6)
	kafkatest.Produce(t, c.Addrs(), parts[0])
	for i := 1; i < len(parts); i++ {
		p := startIngest(t, kafkaArgs(c, "kill", out)...)
		// Produce the next batch while the consumer runs, then kill it at a
		// random point.
		time.Sleep(time.Duration(300+rng.Intn(1200)) * time.Millisecond)
		kafkatest.Produce(t, c.Addrs(), parts[i])
		time.Sleep(time.Duration(rng.Intn(1500)) * time.Millisecond)
		p.cmd.Process.Signal(syscall.SIGKILL)
		if code := p.wait(t, hangGuard); code != 128+int(syscall.SIGKILL) {
			t.Fatalf("kill %d: exit %d\n%s", i, code, p)
		}
		checkDataset(t, out) // every file under a final name is whole
	}
	// Every killed member is gone before the last consumer joins, as on a
	// real broker after their sessions expire (kafkatest.WaitGroupEmpty
	// says why the in-process broker needs the wait).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kafkatest.WaitGroupEmpty(t, ctx, c.Addrs(), "kill")
	finish(t, c, "kill", out)
	checkCommittedAtEnd(t, c, "kill")
	checkDurableCommitted(t, c, "kill", out)
	sameVerdicts(t, out, base)
}

func TestKafkaMembersJoinAndLeave(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: 6}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: 6, Records: 20000, Sessions: 120})
	base := fileBaseline(t, recs)
	out := t.TempDir()
	parts := batches(recs, 3)
	a := startIngest(t, kafkaArgs(c, "churn", out)...)
	kafkatest.Produce(t, c.Addrs(), parts[0])
	time.Sleep(time.Second)
	b := startIngest(t, kafkaArgs(c, "churn", out)...) // added: a rebalance
	kafkatest.Produce(t, c.Addrs(), parts[1])
	time.Sleep(2 * time.Second)
	a.cmd.Process.Signal(syscall.SIGTERM) // removed: another rebalance
	if code := a.wait(t, hangGuard); code != 0 {
		t.Fatalf("consumer a exited %d\n%s", code, a)
	}
	kafkatest.Produce(t, c.Addrs(), parts[2])
	time.Sleep(time.Second)
	b.cmd.Process.Signal(syscall.SIGTERM)
	if code := b.wait(t, hangGuard); code != 0 {
		t.Fatalf("consumer b exited %d\n%s", code, b)
	}
	checkDurableCommitted(t, c, "churn", out)
	finish(t, c, "churn", out)
	checkCommittedAtEnd(t, c, "churn")
	sameVerdicts(t, out, base)
}

func TestKafkaBrokerRestart(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: 3}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: 3, Records: 6000, Sessions: 60})
	parts := batches(recs, 2)
	poisonAfter := kafkatest.Poison(kafkaTopic, 0, []byte("after-restart"))
	all := append(append(append([]kafkatest.Record(nil), parts[0]...), parts[1]...), poisonAfter)
	base := fileBaseline(t, all)
	out := t.TempDir()
	p := startIngest(t, kafkaArgs(c, "restart", out)...)
	kafkatest.Produce(t, c.Addrs(), parts[0])
	time.Sleep(1500 * time.Millisecond)
	c.Restart(t)
	offs := kafkatest.Produce(t, c.Addrs(), append(parts[1], poisonAfter))
	// Consumption resumes by itself: the poison message produced after the
	// restart reaches the quarantine table.
	deadline := time.Now().Add(90 * time.Second)
	for !quarantined(t, out, fmt.Sprintf("source = 'kafka:mcp/0' AND line = %d", offs[len(offs)-1])) {
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("the consumer did not resume after the broker restarted\n%s", p)
		}
		time.Sleep(300 * time.Millisecond)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t, hangGuard); code != 0 {
		t.Fatalf("consumer exited %d\n%s", code, p)
	}
	finish(t, c, "restart", out)
	checkCommittedAtEnd(t, c, "restart")
	sameVerdicts(t, out, base)
}

// quarantined reports whether the dataset's quarantine table holds a row
// that matches the condition.
func quarantined(t *testing.T, out, cond string) bool {
	t.Helper()
	m, err := dataset.ReadManifest(out)
	if err != nil || len(m.Files("quarantine")) == 0 {
		return false
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	var files []string
	for _, f := range m.Files("quarantine") {
		files = append(files, "'"+filepath.Join(out, f.Path)+"'")
	}
	if err := db.QueryRow("SELECT count(*) FROM read_parquet([" + strings.Join(files, ",") + "]) WHERE " + cond).Scan(&n); err != nil {
		return false
	}
	return n > 0
}

func TestKafkaSIGTERMCommitsWithinDeadline(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: 3}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: 3, Records: 20000, Sessions: 100})
	kafkatest.Produce(t, c.Addrs(), recs)
	out := t.TempDir()
	p := startIngest(t, kafkaArgs(c, "term", out, "-shutdown-timeout", "15s")...)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m, err := dataset.ReadManifest(out); err == nil && len(m.Files("exchanges")) > 0 {
			break
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("no rows written\n%s", p)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Exit 0 says the drain, the last commit of the dataset and of the
	// offsets all finished before -shutdown-timeout (past it ingest exits 1).
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t, hangGuard); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, p)
	}
	checkDurableCommitted(t, c, "term", out)
}
