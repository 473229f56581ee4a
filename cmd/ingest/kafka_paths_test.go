package main

// Issue 9, point 8: Kafka and files are two paths into one engine, so the
// same records must give the same correlation, classification and
// redaction whichever path they take. These tests feed the bundled samples
// (and synth's client and server views, co-partitioned) through both and
// compare the datasets row for row on everything that does not name the
// source.

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mcptrace/dataset"
	"mcptrace/decode"
	"mcptrace/input"
	"mcptrace/internal/kafkatest"
)

// sampleFile is one bundled sample split into the Kafka messages a producer
// would send for it.
type sampleFile struct {
	name   string // as ingest's walk of samples/ names it
	path   string
	format decode.Format
	msgs   [][]byte
}

// recordFormats are the formats ingest reads record by record, so that a
// record is a Kafka message (issue 9, point 1).
var recordFormats = []decode.Format{decode.FormatWire, decode.FormatStdioJSONL, decode.FormatOTLPTraces, decode.FormatOTLPLogs}

// recordSamples lists the samples ingest reads from samples/ (its own walk,
// compression undone, format detected as ingest does) whose format is read
// record by record, each split into messages: a line per message for the
// line formats, a document per message for OTLP (the file when it is one
// document, else a line each). The other files are returned as "name
// (format): why" for the test log.
func recordSamples(t *testing.T) (files []sampleFile, skipped []string) {
	t.Helper()
	ins, _, err := input.Expand([]string{"../../samples"}, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		name := strings.TrimPrefix(filepath.ToSlash(in.Name), "../../samples/")
		if strings.HasPrefix(name, "internal/") {
			continue // the generator's code, not a sample
		}
		r, err := input.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		head, err := r.Head()
		if err != nil {
			t.Fatal(err)
		}
		format, ok := decode.Detect(head)
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !ok:
			skipped = append(skipped, name+": no format detected")
			continue
		case format == decode.FormatHAR || format == decode.FormatInspectorHistory || format == decode.FormatInspectorNetwork:
			skipped = append(skipped, fmt.Sprintf("%s (%s): one JSON document holding the whole session", name, format))
			continue
		case !slices.Contains(recordFormats, format):
			// Claude Desktop and VS Code: a line is read in the context of
			// the lines before it (which server started, how many times;
			// continuation lines of a frame or of stderr), so one line
			// alone is not a record.
			skipped = append(skipped, fmt.Sprintf("%s (%s): a log whose lines depend on the lines before them", name, format))
			continue
		}
		f := sampleFile{name: name, path: in.Path, format: format}
		if (format == decode.FormatOTLPTraces || format == decode.FormatOTLPLogs) && json.Valid(data) {
			// One document, pretty-printed or not: one message, whose
			// records (spans) all have its offset. traces.json holds the
			// client's and the server's span of the same requests.
			f.msgs = [][]byte{bytes.TrimSpace(data)}
		} else {
			f.msgs = bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		}
		files = append(files, f)
	}
	return files, skipped
}

// sampleRecords puts file i on partition i of topic, its messages in file
// order, each keyed by its conversation (kafkatest.KeyOf for a wire line)
// or else by the file's name, so that every conversation stays in one
// partition as the README tells producers. Blank lines are produced too:
// they are empty messages, skipped by both paths.
func sampleRecords(topic string, files []sampleFile) []kafkatest.Record {
	var recs []kafkatest.Record
	for i, f := range files {
		for _, m := range f.msgs {
			key := []byte(f.name)
			if f.format == decode.FormatWire {
				if k := kafkatest.KeyOf(m); k != nil {
					key = k
				}
			}
			recs = append(recs, kafkatest.Record{Topic: topic, Partition: int32(i), Key: key, Value: m})
		}
	}
	return recs
}

// sourceCols are the columns of the exchanges table that name the source
// (ids derive from the path or the topic, partition and offset; a line
// is a line number or an offset). The links (retry_of, duplicate_of,
// continues) hold exchange ids: they are compared by what they point to.
var sourceCols = []string{"exchange_id", "source", "source_line", "retry_of", "duplicate_of", "continues"}

// linkCols are the columns that hold another exchange's id.
var linkCols = []string{"retry_of", "duplicate_of", "continues"}

// verdictQuery returns a SELECT of every column of the exchanges table at
// glob except sourceCols, as text, with each link replaced by the start
// time, method and JSON-RPC id of the exchange it points to, so that rows
// of two datasets written from different sources compare as equal when
// they say the same thing.
func verdictQuery(t *testing.T, db *sql.DB, glob string) string {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf("SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet('%s'))", glob))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(sourceCols, c) {
			cols = append(cols, fmt.Sprintf("CAST(x.%s AS VARCHAR) AS %s", c, c))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cols) < 40 {
		t.Fatalf("the exchanges table has only %d columns beside the source's: %v", len(cols), cols)
	}
	var joins []string
	for i, l := range linkCols {
		a := fmt.Sprintf("l%d", i)
		cols = append(cols, fmt.Sprintf("CASE WHEN x.%s IS NULL THEN NULL ELSE coalesce(CAST(%s.started_at AS VARCHAR) || ' ' || %s.method || ' ' || coalesce(%s.jsonrpc_id, ''), 'dangling') END AS %s", l, a, a, a, l))
		joins = append(joins, fmt.Sprintf("LEFT JOIN t %s ON %s.exchange_id = x.%s", a, a, l))
	}
	return fmt.Sprintf("(WITH t AS (SELECT * FROM read_parquet('%s')) SELECT %s FROM t x %s)", glob, strings.Join(cols, ", "), strings.Join(joins, " "))
}

// sameDatasets fails unless the exchanges of kafkaOut and fileOut are the
// same multiset of rows on every column but the source's (verdictQuery),
// kafkaOut holds every exchange_id once, and the quarantine tables hold the
// same (reason, excerpt) rows, except that unplaced messages (ones that
// match no format by themselves, so that a consumer detecting formats per
// message quarantines them as unknown_format where the file path, which
// detected the file's format, gives its decoder's reason) are unknown_format
// in kafkaOut and not_json or not_a_wire_record in fileOut. It returns the
// number of exchanges.
func sameDatasets(t *testing.T, kafkaOut, fileOut string, unplaced int64) int64 {
	t.Helper()
	n := sameExchanges(t, kafkaOut, fileOut)
	sameQuarantine(t, kafkaOut, fileOut, unplaced)
	return n
}

// sameExchanges is sameDatasets' check of the exchanges tables.
func sameExchanges(t *testing.T, kafkaOut, fileOut string) int64 {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kglob := filepath.Join(kafkaOut, "exchanges", "*", "*.parquet")
	fglob := filepath.Join(fileOut, "exchanges", "*", "*.parquet")
	var krows, kids, frows int64
	if err := db.QueryRow(fmt.Sprintf("SELECT count(*), count(DISTINCT exchange_id) FROM read_parquet('%s')", kglob)).Scan(&krows, &kids); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM read_parquet('%s')", fglob)).Scan(&frows); err != nil {
		t.Fatal(err)
	}
	if krows != kids {
		var sample string
		db.QueryRow(fmt.Sprintf(`SELECT string_agg(x, E'\n') FROM (SELECT exchange_id || ': ' || string_agg(source || ' line ' || source_line || ' ' || method || ' id ' || coalesce(jsonrpc_id, 'null'), ', ') x
			FROM read_parquet('%s') GROUP BY exchange_id HAVING count(*) > 1 LIMIT 5)`, kglob)).Scan(&sample)
		t.Errorf("kafka dataset: %d rows but %d distinct exchange ids, e.g.\n%s", krows, kids, sample)
	}
	if krows != frows {
		t.Errorf("kafka dataset has %d exchanges, the same records from files %d", krows, frows)
	}
	k, f := verdictQuery(t, db, kglob), verdictQuery(t, db, fglob)
	exceptAll(t, db, "exchanges only in the kafka dataset", k, f)
	exceptAll(t, db, "exchanges only in the file dataset", f, k)
	return krows
}

// sameQuarantine is sameDatasets' check of the quarantine tables.
func sameQuarantine(t *testing.T, kafkaOut, fileOut string, unplaced int64) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The same records quarantined, with the same masked excerpts.
	kq := fmt.Sprintf("read_parquet('%s')", filepath.Join(kafkaOut, "quarantine", "*", "*.parquet"))
	fq := fmt.Sprintf("read_parquet('%s')", filepath.Join(fileOut, "quarantine", "*", "*.parquet"))
	exceptAll(t, db, "quarantined excerpts only in the kafka dataset", "(SELECT excerpt FROM "+kq+")", "(SELECT excerpt FROM "+fq+")")
	exceptAll(t, db, "quarantined excerpts only in the file dataset", "(SELECT excerpt FROM "+fq+")", "(SELECT excerpt FROM "+kq+")")
	// For the same reasons, but the unplaced messages'.
	var unknown int64
	if err := db.QueryRow("SELECT count(*) FROM " + kq + " WHERE reason = 'unknown_format'").Scan(&unknown); err != nil {
		t.Fatal(err)
	}
	if unknown != unplaced {
		t.Errorf("kafka dataset: %d messages quarantined as unknown_format, %d match no format by themselves", unknown, unplaced)
	}
	var misplaced int64
	if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s WHERE excerpt IN (SELECT excerpt FROM %s WHERE reason = 'unknown_format')
		AND reason NOT IN ('not_json', 'not_a_wire_record')`, fq, kq)).Scan(&misplaced); err != nil {
		t.Fatal(err)
	}
	if misplaced != 0 {
		t.Errorf("%d records the kafka consumer could not place are quarantined by the file path for another reason than not_json or not_a_wire_record", misplaced)
	}
	placed := func(from string) string {
		return fmt.Sprintf("(SELECT reason, excerpt FROM %s WHERE excerpt NOT IN (SELECT excerpt FROM %s WHERE reason = 'unknown_format'))", from, kq)
	}
	exceptAll(t, db, "quarantine rows only in the kafka dataset", placed(kq), placed(fq))
	exceptAll(t, db, "quarantine rows only in the file dataset", placed(fq), placed(kq))
}

// exceptAll fails if a EXCEPT ALL b has rows, showing up to five.
func exceptAll(t *testing.T, db *sql.DB, what, a, b string) {
	t.Helper()
	diff := fmt.Sprintf("(SELECT * FROM %s EXCEPT ALL SELECT * FROM %s) d", a, b)
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM " + diff).Scan(&n); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if n == 0 {
		return
	}
	var sample string
	if err := db.QueryRow("SELECT string_agg(CAST(d AS VARCHAR), E'\\n') FROM (SELECT * FROM " + diff + " LIMIT 5) d").Scan(&sample); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Errorf("%d %s, e.g.\n%s", n, what, sample)
}

// checkCommittedAtEndOf fails unless group has committed every partition's
// end offset of every topic, and each partition's dataset scope is durable
// to exactly that offset.
func checkCommittedAtEndOf(t *testing.T, c *kafkatest.Cluster, group, out string, topics ...string) {
	t.Helper()
	end := kafkatest.End(t, c.Addrs(), topics...)
	got := kafkatest.Committed(t, c.Addrs(), group, topics...)
	if kafkatest.Format(got) != kafkatest.Format(end) {
		t.Errorf("group %s committed %s, end offsets %s", group, kafkatest.Format(got), kafkatest.Format(end))
	}
	m, err := dataset.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	for topic, ps := range end {
		for p, e := range ps {
			id := fmt.Sprintf("kafka:%s/%d", topic, p)
			src := m.Sources[id]
			if src == nil {
				t.Errorf("%s: end offset %d, but the dataset does not know the partition", id, e)
				continue
			}
			if src.Position.End != e {
				t.Errorf("%s: dataset durable to %d, end offset %d", id, src.Position.End, e)
			}
		}
	}
}

func TestKafkaSamplesSameVerdictsAsFiles(t *testing.T) {
	files, skipped := recordSamples(t)
	t.Logf("not fed to Kafka (a Kafka message is one record; these formats are not read record by record):\n  %s", strings.Join(skipped, "\n  "))
	// The formats the issue names must all be here, or the test proves
	// less than it says.
	seen := map[decode.Format]int{}
	var wire []sampleFile
	for _, f := range files {
		seen[f.format]++
		if f.format == decode.FormatWire {
			wire = append(wire, f)
		}
	}
	for _, want := range recordFormats {
		if seen[want] == 0 {
			t.Errorf("no sample of format %s in samples/", want)
		}
	}
	if len(files) < 10 || len(skipped) < 5 {
		t.Fatalf("%d record-by-record samples and %d others found in samples/", len(files), len(skipped))
	}
	// Merging is off on both paths: the samples hold client and server
	// logs of the same traffic (seed, cakewalk, correlation) and what
	// merges is compared by TestKafkaCoPartitionedClientServerMerge.
	t.Run("formats detected per message", func(t *testing.T) {
		// A message that matches no format by itself (a plain log line, a
		// JSON line of another logger) cannot be a wire record to a
		// consumer that detects formats per message: unknown_format.
		var unplaced int64
		for _, f := range files {
			for _, m := range f.msgs {
				if _, ok := decode.Detect(m); !ok && !decode.IsBlank(m) {
					unplaced++
				}
			}
		}
		if unplaced == 0 {
			t.Fatal("no sample message matches no format: hostile/garbage.ndjson has two")
		}
		compareSamples(t, files, unplaced)
	})
	t.Run("-format wire", func(t *testing.T) {
		// With the format fixed, every message is read as the file path
		// reads a wire log: the quarantine reasons are the same too.
		compareSamples(t, wire, 0, "-format", "wire")
	})
}

// compareSamples produces the files to a topic (on a cluster of its own),
// a partition each, consumes it with one ingest until caught up, ingests
// the files through the file path, and compares the two datasets
// (sameDatasets). extra flags go to both runs.
func compareSamples(t *testing.T, files []sampleFile, unplaced int64, extra ...string) {
	var paths []string
	for i, f := range files {
		paths = append(paths, f.path)
		t.Logf("partition %d: %s (%s, %d messages)", i, f.name, f.format, len(f.msgs))
	}
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: len(files)}})
	recs := sampleRecords(kafkaTopic, files)
	kafkatest.Produce(t, c.Addrs(), recs)

	kout := t.TempDir()
	// -max-hold 0: files have no such bound, and the samples' logs span
	// up to an hour, so the default of 15 minutes cuts some conversations
	// (the same ones however the topic is fetched: correlate's
	// TestMaxHoldCutsSameWhateverTheRounds).
	kp, code := runIngestProc(t, kafkaArgs(c, "samples", kout, append([]string{"-merge", "off", "-kafka-until-caught-up", "-max-hold", "0"}, extra...)...)...)
	if code != ExitQuarantined {
		t.Fatalf("kafka consumer exited %d\n%s", code, kp)
	}
	fout := t.TempDir()
	fp, code := runIngestProc(t, append(append([]string{"-out", fout, "-workers", "2", "-merge", "off"}, extra...), paths...)...)
	if code != ExitQuarantined {
		t.Fatalf("file ingest exited %d\n%s", code, fp)
	}
	checkCommittedAtEndOf(t, c, "samples", kout, kafkaTopic)

	n := sameDatasets(t, kout, fout, unplaced)
	kx, kq := checkDataset(t, kout)
	fx, fq := checkDataset(t, fout)
	if kx != n || fx != n || kq != fq {
		t.Errorf("dataset files: kafka %d exchanges and %d quarantine rows, files %d and %d", kx, kq, fx, fq)
	}
	// Every record accounted for on both paths, and the same count.
	krec, frec := summaryNumber(t, kp.stdout.String(), reRecords), summaryNumber(t, fp.stdout.String(), reRecords)
	if !reConservation.MatchString(kp.stdout.String()) || krec != frec {
		t.Errorf("kafka consumer read %d records, the file path %d (conservation must hold)", krec, frec)
	}
	// The comparison is not empty: the samples have exchanges of many
	// outcomes and quarantined lines (hostile/garbage.ndjson).
	if n < 100 || kq < 4 {
		t.Errorf("only %d exchanges and %d quarantine rows compared", n, kq)
	}
	if t.Failed() {
		t.Logf("kafka consumer:\n%s\nfile ingest:\n%s", kp, fp)
	}
	t.Logf("%d exchanges and %d quarantine rows from %d records in %d messages: the same on both paths", n, kq, krec, len(recs))
}

// mergedCols are what merging adds to a row.
const mergedCols = `sides, failed_hop, server_outcome, client_post_count, server_post_count,
	CAST(server_http_statuses AS VARCHAR) AS server_statuses, clock_skew_ms`

// TestKafkaCoPartitionedClientServerMerge: a client topic and a server
// topic with the same keys and partition count, consumed by one member,
// merge as the file path merges the same logs.
//
// synth's traffic (Days 1) spans about 5 s of event time, well inside the
// default -merge-window of 5 minutes. Spread wider (Days 2: one exchange
// every 32 s), the Kafka path merges a fifth of what the file path merges:
// a defect reported to the lead (the Merger is advanced with the newest
// event time of every owned partition, so a client partition read one
// fetch ahead of its server partition has its rows written alone).
func TestKafkaCoPartitionedClientServerMerge(t *testing.T) {
	const serverTopic = kafkaTopic + "-server"
	const partitions = 3
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: partitions, serverTopic: partitions}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: partitions, Records: 6000, Sessions: 60, Server: true, ServerTopic: serverTopic})
	var clientRecs, serverRecs int
	for _, r := range recs {
		switch r.Topic {
		case kafkaTopic:
			clientRecs++
		case serverTopic:
			serverRecs++
		}
	}
	if clientRecs == 0 || clientRecs != serverRecs {
		t.Fatalf("synth gave %d client and %d server records", clientRecs, serverRecs)
	}
	kafkatest.Produce(t, c.Addrs(), recs)

	// The file path over the per-partition files of both sides: client and
	// server logs in one run merge by themselves (-merge auto).
	base := fileBaseline(t, recs)
	out := t.TempDir()
	p, code := runIngestProc(t, kafkaArgs(c, "merge", out, "-kafka-topic", serverTopic, "-kafka-until-caught-up")...)
	if code != 0 {
		t.Fatalf("kafka consumer exited %d\n%s", code, p)
	}
	checkCommittedAtEndOf(t, c, "merge", out, kafkaTopic, serverTopic)
	n := sameVerdicts(t, out, base) // also: every exchange_id once
	sameExchanges(t, out, base)     // every column but the source's
	if kx, kq := checkDataset(t, out); kx != n || kq != 0 {
		t.Errorf("kafka dataset files: %d exchanges and %d quarantine rows, want %d and 0", kx, kq, n)
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k := fmt.Sprintf("read_parquet('%s')", filepath.Join(out, "exchanges", "*", "*.parquet"))
	f := fmt.Sprintf("read_parquet('%s')", filepath.Join(base, "exchanges", "*", "*.parquet"))
	var kboth, fboth, fall int64
	if err := db.QueryRow("SELECT count(*) FILTER (WHERE sides = 'both') FROM " + k).Scan(&kboth); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT count(*) FILTER (WHERE sides = 'both'), count(*) FROM "+f).Scan(&fboth, &fall); err != nil {
		t.Fatal(err)
	}
	if kboth != fboth {
		t.Errorf("merged rows (sides = 'both'): kafka %d, files %d", kboth, fboth)
	}
	// Every client line has its server view, so every exchange merges.
	if fboth == 0 || fboth != fall {
		t.Errorf("the file path merged %d of %d exchanges; every one has both views", fboth, fall)
	}
	// sameExchanges compared every column; these are the ones merging
	// decides, named in a failure.
	cols := verdictCols + ", " + mergedCols
	exceptAll(t, db, "merged exchanges only in the kafka dataset", fmt.Sprintf("(SELECT %s FROM %s)", cols, k), fmt.Sprintf("(SELECT %s FROM %s)", cols, f))
	exceptAll(t, db, "merged exchanges only in the file dataset", fmt.Sprintf("(SELECT %s FROM %s)", cols, f), fmt.Sprintf("(SELECT %s FROM %s)", cols, k))
	// The server's view was seen: a server outcome on every merged row.
	var noServer int64
	if err := db.QueryRow("SELECT count(*) FROM " + k + " WHERE sides = 'both' AND server_outcome IS NULL").Scan(&noServer); err != nil {
		t.Fatal(err)
	}
	if noServer != 0 {
		t.Errorf("%d merged rows without a server_outcome", noServer)
	}
	if t.Failed() {
		t.Logf("kafka consumer:\n%s", p)
	}
	t.Logf("%d exchanges, %d merged, the same on both paths", n, kboth)
}
