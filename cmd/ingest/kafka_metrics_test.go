package main

// The metrics acceptance test of issue 9: a long-lived consumer serving
// -metrics-addr is scraped at a quiet moment, and its counters and gauges
// are checked against the dataset it wrote, the records produced and the
// offsets the group committed.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcptrace/dataset"
	"mcptrace/internal/kafkatest"
	"mcptrace/metrics"
)

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago (the
// caller retries if another process takes it first).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// startIngestWithMetrics starts ingest with args and -metrics-addr on a
// free port, and returns once the process logs that it serves there (so
// the server answering on that port is this process's). A bind race (the
// port taken between freePort and ingest's listen) is retried on another
// port.
func startIngestWithMetrics(t *testing.T, args ...string) (p *ingestProc, base string) {
	t.Helper()
	for try := 1; ; try++ {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		p = startIngest(t, append(append([]string(nil), args...), "-metrics-addr", addr)...)
		serving := `"addr":"` + addr + `"`
		deadline := time.Now().Add(hangGuard)
		for {
			s := p.stderr.String()
			if strings.Contains(s, serving) && strings.Contains(s, "serving /metrics") {
				return p, "http://" + addr
			}
			if p.exited() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("ingest did not start serving on %s within %v\n%s", addr, hangGuard, p)
			}
			time.Sleep(20 * time.Millisecond)
		}
		code := exitCode(p.err)
		if code == ExitUsage && strings.Contains(p.stderr.String(), "-metrics-addr") && try < 5 {
			t.Logf("try %d: %s was taken before ingest could listen; another port", try, addr)
			continue
		}
		t.Fatalf("ingest exited %d before serving metrics on %s\n%s", code, addr, p)
	}
}

// httpGet returns the status and body of a GET of url.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// quietFamilies are the series that stay still once every record is read
// and committed. commits_total and file_flush_seconds are left out: a
// commit tick of a quiet stream moves them without changing anything else.
var quietFamilies = []string{
	"mcptrace_records_in_total", "mcptrace_bytes_in_total", "mcptrace_exchanges_out_total",
	"mcptrace_quarantined_total", "mcptrace_duplicates_dropped_total", "mcptrace_open_conversations",
	"mcptrace_records_uncommitted", "mcptrace_partition_lag", "mcptrace_committed_offset",
	"mcptrace_assigned_partitions", "mcptrace_rebalances_total",
}

// quietSeries flattens a snapshot's quietFamilies to "name{k=v,...}" →
// value, for comparing two scrapes.
func quietSeries(s *metrics.Snapshot) map[string]float64 {
	out := map[string]float64{}
	for _, name := range quietFamilies {
		f := s.Families()[name]
		if f == nil {
			continue
		}
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			slices.Sort(ls)
			var v float64
			switch {
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				v = m.GetGauge().GetValue()
			}
			out[name+"{"+strings.Join(ls, ",")+"}"] = v
		}
	}
	return out
}

func formatSeries(m map[string]float64) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "  %s %v\n", k, m[k])
	}
	return b.String()
}

// datasetCounts is what the dataset holds: exchanges by outcome,
// quarantine rows by reason and by coordinates, and the exchanges'
// distinct exchange_ids.
type datasetCounts struct {
	exchanges, distinctIDs int64
	byOutcome              map[string]int64
	quarantine             int64
	byReason               map[string]int64
	quarantineAt           map[string]bool // "source@line"
}

// readDatasetCounts reads, with DuckDB, the files the manifest lists (an
// empty result before the first commit).
func readDatasetCounts(t *testing.T, db *sql.DB, out string) datasetCounts {
	t.Helper()
	d := datasetCounts{byOutcome: map[string]int64{}, byReason: map[string]int64{}, quarantineAt: map[string]bool{}}
	m, err := dataset.ReadManifest(out)
	if err != nil {
		return d // not written yet
	}
	list := func(table string) string {
		var files []string
		for _, f := range m.Files(table) {
			files = append(files, "'"+filepath.Join(out, f.Path)+"'")
		}
		if len(files) == 0 {
			return ""
		}
		return "read_parquet([" + strings.Join(files, ",") + "])"
	}
	groups := func(query string, into map[string]int64) int64 {
		rows, err := db.Query(query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		var total int64
		for rows.Next() {
			var k string
			var n int64
			if err := rows.Scan(&k, &n); err != nil {
				t.Fatal(err)
			}
			into[k] += n
			total += n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return total
	}
	if ex := list("exchanges"); ex != "" {
		d.exchanges = groups("SELECT outcome, count(*) FROM "+ex+" GROUP BY outcome", d.byOutcome)
		if err := db.QueryRow("SELECT count(DISTINCT exchange_id) FROM " + ex).Scan(&d.distinctIDs); err != nil {
			t.Fatal(err)
		}
	}
	if q := list("quarantine"); q != "" {
		d.quarantine = groups("SELECT reason, count(*) FROM "+q+" GROUP BY reason", d.byReason)
		at := map[string]int64{}
		groups("SELECT source || '@' || CAST(line AS VARCHAR), count(*) FROM "+q+" GROUP BY 1", at)
		for k := range at {
			d.quarantineAt[k] = true
		}
	}
	return d
}

func TestKafkaMetricsMatchDataset(t *testing.T) {
	const parts = 3
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: parts}})
	// Two batches of conversations, the second two hours (in the logs'
	// time) after the first: the second one's records close the first
	// one's conversations (-idle-timeout, 30 min by default), so commits
	// move past them, while the second one's stay open at the end and
	// hold their partitions' commits back.
	early := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: parts, Records: 2000, Sessions: 24, Seed: 1})
	late := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: parts, Records: 2000, Sessions: 24, Seed: 2,
		Start: time.Date(2026, 10, 17, 12, 0, 0, 0, time.UTC)})
	// Two poison messages, on two partitions, of two kinds (binary bytes,
	// and a wire record cut off mid-string), one in each batch.
	poisons := []kafkatest.Record{
		kafkatest.Poison(kafkaTopic, 0, []byte("poison-0")),
		kafkatest.PoisonWire(kafkaTopic, 2, []byte("poison-2")),
	}
	first := slices.Concat(early[:len(early)/2], poisons[:1], early[len(early)/2:])
	second := slices.Concat(late[:len(late)/2], poisons[1:], late[len(late)/2:])
	all := slices.Concat(first, second)
	poisonAt := []int{len(early) / 2, len(first) + len(late)/2} // indexes of the poisons in all
	produced := map[int32]int64{}
	producedBytes := map[int32]int64{}
	for _, r := range all {
		produced[r.Partition]++
		producedBytes[r.Partition] += int64(len(r.Value))
	}
	for p := range int32(parts) {
		if produced[p] == 0 {
			t.Fatalf("partition %d gets no records; pick other sessions", p)
		}
	}

	// The first batch is there before the consumer starts, the second
	// comes while it runs.
	offsets := kafkatest.Produce(t, c.Addrs(), first)

	const group = "metrics"
	out := t.TempDir()
	p, base := startIngestWithMetrics(t, kafkaArgs(c, group, out)...)

	if code, body := httpGet(t, base+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d %q, want 200\n%s", code, body, p)
	}
	// Before the member has partitions /readyz may say 503; it must
	// become 200, and never answer anything else.
	deadline := time.Now().Add(hangGuard)
	for {
		code, body := httpGet(t, base+"/readyz")
		if code == http.StatusOK {
			break
		}
		if code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz: %d %q, want 200 or (before assignment) 503\n%s", code, body, p)
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("/readyz never became 200 (last: %d %q)\n%s", code, body, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := httpGet(t, base+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz once ready: %d %q, want 200\n%s", code, body, p)
	}
	offsets = append(offsets, kafkatest.Produce(t, c.Addrs(), second)...)
	end := kafkatest.End(t, c.Addrs(), kafkaTopic)[kafkaTopic]
	for part, n := range produced {
		if end[part] != n {
			t.Fatalf("partition %d: end offset %d after producing %d records to an empty topic", part, end[part], n)
		}
	}
	// Where the second batch starts on each partition: its conversations
	// are open at the end, so no commit may pass it. (A commit may stay
	// below it: the engine bounds every partition's commit by the oldest
	// record any open conversation needs, on whichever partition, in the
	// order records were read; so only "not past" is asserted.)
	firstLate := map[int32]int64{}
	for i := len(first); i < len(all); i++ {
		if _, ok := firstLate[all[i].Partition]; !ok {
			firstLate[all[i].Partition] = offsets[i]
		}
	}
	var poisonKeys []string
	for _, i := range poisonAt {
		poisonKeys = append(poisonKeys, fmt.Sprintf("kafka:%s/%d@%d", kafkaTopic, all[i].Partition, offsets[i]))
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	url := base + "/metrics"
	scrape := func() *metrics.Snapshot {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := metrics.Scrape(ctx, url)
		if err != nil {
			t.Fatalf("%v\n%s", err, p)
		}
		return s
	}

	// A quiet moment: every record read, the poison messages quarantined,
	// the committed offsets the same over two polls more than a commit
	// interval (300 ms) apart, two scrapes around the dataset's read that
	// agree, and the dataset holding as many rows as the counters say.
	// The time limit only turns a hang into a failure.
	var (
		snap      *metrics.Snapshot
		ds        datasetCounts
		committed map[int32]int64
		prevComm  string
		why       string
	)
	deadline = time.Now().Add(hangGuard)
	for {
		if p.exited() {
			t.Fatalf("the consumer exited while it should be running\n%s", p)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no quiet moment within %v: %s\n%s", hangGuard, why, p)
		}
		time.Sleep(500 * time.Millisecond)
		a := scrape()
		ds = readDatasetCounts(t, db, out)
		committed = kafkatest.Committed(t, c.Addrs(), group, kafkaTopic)[kafkaTopic]
		snap = scrape()
		comm := kafkatest.Format(kafkatest.Offsets{kafkaTopic: committed})
		qa, qb := quietSeries(a), quietSeries(snap)
		read, _ := snap.Sum("mcptrace_records_in_total", map[string]string{"source_kind": "kafka"})
		nOut, _ := snap.Sum("mcptrace_exchanges_out_total", nil)
		quar, _ := snap.Sum("mcptrace_quarantined_total", nil)
		stable := comm == prevComm
		prevComm = comm
		var missing []string
		for _, k := range poisonKeys {
			if !ds.quarantineAt[k] {
				missing = append(missing, k)
			}
		}
		switch {
		case int64(read) != int64(len(all)):
			why = fmt.Sprintf("%v of %d records read", read, len(all))
		case len(missing) > 0:
			why = fmt.Sprintf("poison messages %v not in the quarantine table", missing)
		case !stable:
			why = "committed offsets still moving: " + comm
		case !maps.Equal(qa, qb):
			why = fmt.Sprintf("two scrapes differ:\n%s---\n%s", formatSeries(qa), formatSeries(qb))
		case int64(nOut) != ds.exchanges || int64(quar) != ds.quarantine:
			why = fmt.Sprintf("counters say %v exchanges and %v quarantined, the dataset holds %d and %d", nOut, quar, ds.exchanges, ds.quarantine)
		default:
			why = ""
		}
		if why == "" {
			break
		}
	}
	t.Logf("quiet moment: %d exchanges, %d quarantined, committed %s, second batch from %s, end %s\n%s", ds.exchanges, ds.quarantine,
		prevComm, kafkatest.Format(kafkatest.Offsets{kafkaTopic: firstLate}), kafkatest.Format(kafkatest.Offsets{kafkaTopic: end}), formatSeries(quietSeries(snap)))

	// Exchanges out, by outcome, against the exchanges table.
	if ds.exchanges == 0 {
		t.Errorf("the dataset holds no exchange")
	}
	if ds.distinctIDs != ds.exchanges {
		t.Errorf("exchanges table: %d rows, %d distinct exchange ids", ds.exchanges, ds.distinctIDs)
	}
	checkByLabel(t, snap, "mcptrace_exchanges_out_total", "outcome", ds.byOutcome)
	// Quarantined, by reason, against the quarantine table.
	if ds.quarantine != int64(len(poisons)) {
		t.Errorf("quarantine table: %d rows, want %d (the poison messages)", ds.quarantine, len(poisons))
	}
	checkByLabel(t, snap, "mcptrace_quarantined_total", "reason", ds.byReason)

	// Per partition: records and bytes in, lag, committed offset.
	var uncommitted int64
	behind := false
	for part := range int32(parts) {
		l := map[string]string{"source_kind": "kafka", "topic": kafkaTopic, "partition": strconv.Itoa(int(part))}
		if v, ok := snap.Value("mcptrace_records_in_total", l); !ok || int64(v) != produced[part] {
			t.Errorf("mcptrace_records_in_total{partition=%q} = %v (present %v), produced %d", l["partition"], v, ok, produced[part])
		}
		if v, ok := snap.Value("mcptrace_bytes_in_total", l); !ok || int64(v) != producedBytes[part] {
			t.Errorf("mcptrace_bytes_in_total{partition=%q} = %v (present %v), produced %d bytes", l["partition"], v, ok, producedBytes[part])
		}
		tp := map[string]string{"topic": kafkaTopic, "partition": strconv.Itoa(int(part))}
		if v, ok := snap.Value("mcptrace_partition_lag", tp); !ok || v != 0 {
			t.Errorf("mcptrace_partition_lag{partition=%q} = %v (present %v), want 0: every record is read", tp["partition"], v, ok)
		}
		want, ok := committed[part]
		if !ok {
			// The first batch's conversations are closed: their records
			// are committed.
			t.Errorf("partition %d: the group has committed nothing, though the first batch's conversations are closed", part)
			if v, has := snap.Value("mcptrace_committed_offset", tp); has {
				t.Errorf("mcptrace_committed_offset{partition=%q} = %v, but the group has committed nothing there", tp["partition"], v)
			}
		} else if v, has := snap.Value("mcptrace_committed_offset", tp); !has || int64(v) != want {
			t.Errorf("mcptrace_committed_offset{partition=%q} = %v (present %v), the group committed %d", tp["partition"], v, has, want)
		}
		if want > firstLate[part] {
			t.Errorf("partition %d: committed %d, past offset %d where the conversations still open start", part, want, firstLate[part])
		}
		if want < end[part] {
			behind = true
		}
		uncommitted += end[part] - want
	}
	if v, ok := snap.Value("mcptrace_records_uncommitted", nil); !ok || int64(v) != uncommitted {
		t.Errorf("mcptrace_records_uncommitted = %v (present %v), want %d (end offsets - committed offsets, everything read)", v, ok, uncommitted)
	}

	// Commits, flushes, assignment, duplicates.
	for _, kind := range []string{metrics.CommitDataset, metrics.CommitKafka} {
		if v, ok := snap.Value("mcptrace_commits_total", map[string]string{"kind": kind}); !ok || v <= 0 {
			t.Errorf("mcptrace_commits_total{kind=%q} = %v (present %v), want > 0", kind, v, ok)
		}
	}
	if errs, n := snap.Sum("mcptrace_commit_errors_total", nil); n == 0 || errs != 0 {
		t.Errorf("mcptrace_commit_errors_total: %v over %d series, want 0 (nothing failed)", errs, n)
	}
	if n, _, ok := snap.HistogramCount("mcptrace_file_flush_seconds", nil); !ok || n == 0 {
		t.Errorf("mcptrace_file_flush_seconds: count %d (present %v), want > 0", n, ok)
	}
	if v, ok := snap.Value("mcptrace_assigned_partitions", nil); !ok || v != parts {
		t.Errorf("mcptrace_assigned_partitions = %v (present %v), want %d", v, ok, parts)
	}
	for _, why := range []string{metrics.DupRedelivered, metrics.DupAlreadyWritten} {
		if v, ok := snap.Value("mcptrace_duplicates_dropped_total", map[string]string{"why": why}); !ok || v != 0 {
			t.Errorf("mcptrace_duplicates_dropped_total{why=%q} = %v (present %v), want 0: one member, no replay", why, v, ok)
		}
	}
	// Open conversations hold their partition's commit back.
	open, ok := snap.Value("mcptrace_open_conversations", nil)
	switch {
	case !ok || open < 0:
		t.Errorf("mcptrace_open_conversations = %v (present %v), want >= 0", open, ok)
	case open > 0 && !behind:
		t.Errorf("%v conversations open, yet every partition is committed to its end (%s)", open, prevComm)
	}

	// SIGTERM: a clean exit with everything written committed.
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t, hangGuard); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s", code, p)
	}
	checkDurableCommitted(t, c, group, out)
	if t.Failed() {
		t.Logf("consumer:\n%s", p)
	}
}

// checkByLabel fails unless the series of name, by label, equal want
// (series at 0 may be absent from want).
func checkByLabel(t *testing.T, s *metrics.Snapshot, name, label string, want map[string]int64) {
	t.Helper()
	have := map[string]float64{}
	if f := s.Families()[name]; f != nil {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					have[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	for k, n := range want {
		if int64(have[k]) != n {
			t.Errorf("%s{%s=%q} = %v, the dataset holds %d", name, label, k, have[k], n)
		}
	}
	for k, v := range have {
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("%s{%s=%q} = %v, the dataset holds none", name, label, k, v)
		}
	}
}
