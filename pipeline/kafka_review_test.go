package pipeline_test

// Review tests of issue 9 (Kafka): each reproduces a defect found in review
// or guards a behaviour the review checked.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mcptrace/dataset"
	"mcptrace/internal/kafkatest"
	"mcptrace/kafkasrc"
	"mcptrace/objstore"
	"mcptrace/pipeline"
)

// reviewS3 is gofakes3 over real HTTP whose PUTs of keys containing fail
// answer 500 (after reading part of the body).
type reviewS3 struct {
	srv  *httptest.Server
	mu   sync.Mutex
	fail string
}

func startReviewS3(t *testing.T, bucket string) *reviewS3 {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(be).Server()
	f := &reviewS3{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		fail := r.Method == http.MethodPut && f.fail != "" && strings.Contains(r.URL.Path, f.fail)
		f.mu.Unlock()
		if fail {
			io.CopyN(io.Discard, r.Body, 512)
			http.Error(w, "injected failure", http.StatusInternalServerError)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *reviewS3) setFail(s string) { f.mu.Lock(); f.fail = s; f.mu.Unlock() }

func reviewStore(t *testing.T, f *reviewS3, url string) *objstore.Store {
	t.Helper()
	st, err := objstore.Open(context.Background(), url, objstore.Config{Endpoint: f.srv.URL, PathStyle: true, Region: "us-east-1",
		AccessKey: "k", SecretKey: "s", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// bucketPosition is the position the bucket's manifest of a partition's
// scope records (0: no manifest).
func bucketPosition(t *testing.T, st *objstore.Store, tp kafkasrc.TopicPartition) int64 {
	t.Helper()
	data, err := st.Get(context.Background(), ".mcptrace/scopes/"+pipeline.ScopeName(tp)+"/manifest.json")
	if errors.Is(err, objstore.ErrNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err := dataset.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if e := m.Sources[pipeline.KafkaInputID(tp)]; e != nil {
		return e.Position.End
	}
	return 0
}

// A failed upload must not let the partition's offset be committed: the
// bucket's manifest is the truth the next owner adopts, so records between
// its position and a commit past it are never read again.
func TestReviewKafkaS3FailedUploadIsNotCommitted(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"mcp": 2}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 2, Records: 2000, Sessions: 20})
	kafkatest.Produce(t, c.Addrs(), recs)
	s3 := startReviewS3(t, "traces")
	url := "s3://traces/ds"
	st := reviewStore(t, s3, url)
	s3.setFail("/mcp+1+") // partition 1's data files

	cfg := pipeline.Config{OutDir: t.TempDir(), Workers: 2, Pseudonyms: testPseudonyms(t), CommitInterval: 100 * time.Millisecond,
		Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)}
	ko := pipeline.KafkaOptions{UntilCaughtUp: true, Store: st, Consumer: kafkasrc.Config{Brokers: c.Addrs(), Topics: []string{"mcp"}, Group: "g",
		SessionTimeout: 2 * time.Second, HeartbeatInterval: 200 * time.Millisecond, RebalanceTimeout: 5 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := pipeline.RunKafka(ctx, cfg, ko); err == nil {
		t.Fatal("RunKafka succeeded although partition 1's uploads failed")
	}
	got := kafkatest.Committed(t, c.Addrs(), "g", "mcp")
	tp := kafkasrc.TopicPartition{Topic: "mcp", Partition: 1}
	if pos := bucketPosition(t, st, tp); got["mcp"][1] > pos {
		t.Errorf("partition 1 committed to offset %d, but the bucket's manifest holds it durable only to %d: "+
			"the records between are never read again", got["mcp"][1], pos)
	}

	// What that loses: uploads work again, a new consumer finishes, and the
	// dataset lacks what a run with no failure writes.
	s3.setFail("")
	cfg.OutDir = t.TempDir()
	if _, err := pipeline.RunKafka(ctx, cfg, ko); err != nil {
		t.Fatalf("second run: %v", err)
	}
	down := t.TempDir()
	if err := st.Download(ctx, down); err != nil {
		t.Fatal(err)
	}
	want := runKafkaUntilCaughtUp(t, c, "baseline", t.TempDir(), "mcp")
	db := duck(t)
	var rows int64
	if err := db.QueryRow("SELECT count(DISTINCT exchange_id) FROM read_parquet('" + filepath.Join(down, "exchanges", "*", "*.parquet") + "')").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != want.Exchanges {
		t.Errorf("the bucket holds %d exchanges after the failure and a rerun, an uninterrupted run writes %d", rows, want.Exchanges)
	}
}

// reviewConsumer is a long-lived consumer of topics into out that a test
// stops with stop(); read is how many records its source has read.
type reviewConsumer struct {
	read atomic.Int64
	stop chan struct{}
	done chan struct{}
	sum  *pipeline.Summary
	err  error
}

func startReviewConsumer(t *testing.T, c *kafkatest.Cluster, group, out string, untilCaughtUp bool, topics ...string) *reviewConsumer {
	t.Helper()
	return startReviewConsumerTo(t, c, group, out, nil, untilCaughtUp, topics...)
}

// reviewMaxHold is the -max-hold of the review consumers (0: the default).
var reviewMaxHold time.Duration

// startReviewConsumerTo is startReviewConsumer publishing to store (nil:
// out is the dataset).
func startReviewConsumerTo(t *testing.T, c *kafkatest.Cluster, group, out string, store *objstore.Store, untilCaughtUp bool, topics ...string) *reviewConsumer {
	t.Helper()
	rc := &reviewConsumer{stop: make(chan struct{}), done: make(chan struct{})}
	cfg := pipeline.Config{OutDir: out, Workers: 2, Pseudonyms: testPseudonyms(t), Stop: rc.stop,
		IdleTimeout: time.Minute, CommitInterval: 100 * time.Millisecond, FlushInterval: time.Hour,
		Progress: func(p pipeline.Progress) { rc.read.Store(p.Records) }, ProgressEvery: 10 * time.Millisecond, Log: zerolog.Nop()}
	ko := pipeline.KafkaOptions{UntilCaughtUp: untilCaughtUp, MergeWindow: time.Minute, Store: store, MaxHold: reviewMaxHold, Consumer: kafkasrc.Config{Brokers: c.Addrs(), Topics: topics, Group: group,
		SessionTimeout: 2 * time.Second, HeartbeatInterval: 200 * time.Millisecond, RebalanceTimeout: 5 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	go func() { defer close(rc.done); defer cancel(); rc.sum, rc.err = pipeline.RunKafka(ctx, cfg, ko) }()
	return rc
}

func (rc *reviewConsumer) waitRead(t *testing.T, n int64) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for rc.read.Load() < n {
		select {
		case <-rc.done:
			t.Fatalf("consumer ended early: %v", rc.err)
		case <-deadline:
			t.Fatalf("consumer read %d records in 30 s, want %d", rc.read.Load(), n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// end waits for the consumer and returns its error.
func (rc *reviewConsumer) end() error { <-rc.done; return rc.err }

func (rc *reviewConsumer) wait(t *testing.T) *pipeline.Summary {
	t.Helper()
	<-rc.done
	if rc.err != nil {
		t.Fatalf("RunKafka: %v", rc.err)
	}
	return rc.sum
}

// exchangesBySide counts the dataset's rows per (session, jsonrpc id,
// sides), of the exchanges of 2026-10-17 (the sessions a test compares;
// records days later only end conversations).
func exchangesBySide(t *testing.T, out string) map[string]int {
	t.Helper()
	db := duck(t)
	rows, err := db.Query("SELECT session_id || '/' || jsonrpc_id || '/' || sides, count(*) FROM read_parquet('" +
		filepath.Join(out, "exchanges", "*", "*.parquet") + "') WHERE started_at < TIMESTAMP '2026-10-18 00:00:00' GROUP BY 1 ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		got[k] = n
	}
	return got
}

// Co-partitioned client and server topics: a client conversation that has
// ended (its records below the commit are "used up") while the server's
// view of it is still open. A restart replays the server's records, whose
// rows were written merged into the client's; with the client's records
// skipped they come out a second time, server-only, under the server's
// exchange ids, which no key knows.
func TestReviewKafkaReplayDoublesMergedRows(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"c": 1, "s": 1, "c2": 1, "s2": 1}})
	// feed produces, in three steps, session A's client view, its server
	// view, and another session on the client topic an hour later (the
	// client's log moves on: A's client view ends idle and the merge
	// decides; the server's log does not move), then stops the consumer
	// (stop) or lets it run, and finishes with a run until caught up.
	feed := func(ct, st, group string, stop bool) map[string]int {
		a := kafkatest.Synth(kafkatest.SynthOptions{Topic: ct, Partitions: 1, Records: 3, Sessions: 1, Seed: 1, Server: true, ServerTopic: st})
		client, server := a[:len(a)/2], a[len(a)/2:]
		t0, _ := time.Parse(time.RFC3339, "2026-10-17T10:00:00Z")
		later := kafkatest.Synth(kafkatest.SynthOptions{Topic: ct, Partitions: 1, Records: 1, Sessions: 1, Seed: 2, Start: t0.Add(time.Hour)})
		out := t.TempDir()
		rc := startReviewConsumer(t, c, group, out, false, ct, st)
		// Each step is read and through the engine before the next is
		// produced (the source cuts what arrives within 20 ms together, in
		// topic order: the client's later record would overtake the server's).
		kafkatest.Produce(t, c.Addrs(), client)
		rc.waitRead(t, int64(len(client)))
		time.Sleep(300 * time.Millisecond)
		kafkatest.Produce(t, c.Addrs(), server)
		rc.waitRead(t, int64(len(client)+len(server)))
		time.Sleep(300 * time.Millisecond)
		kafkatest.Produce(t, c.Addrs(), later)
		rc.waitRead(t, int64(len(client)+len(server)+len(later)))
		time.Sleep(500 * time.Millisecond)
		if stop {
			close(rc.stop)
			rc.wait(t)
			rc = startReviewConsumer(t, c, group, out, true, ct, st) // the restart
		} else {
			// The same consumer, uninterrupted, until the end: one more
			// record far later ends every conversation.
			fin := kafkatest.Synth(kafkatest.SynthOptions{Topic: ct, Partitions: 1, Records: 1, Sessions: 1, Seed: 3, Start: t0.Add(48 * time.Hour)})
			fin = append(fin, kafkatest.Synth(kafkatest.SynthOptions{Topic: st, Partitions: 1, Records: 1, Sessions: 1, Seed: 3, Start: t0.Add(48 * time.Hour)})...)
			kafkatest.Produce(t, c.Addrs(), fin)
			rc.waitRead(t, int64(len(client)+len(server)+len(later)+len(fin)))
			time.Sleep(500 * time.Millisecond)
			close(rc.stop)
		}
		sum := rc.wait(t)
		t.Logf("%s: the last consumer read %d records, skipped %d as already written, dropped %d rows as known",
			group, sum.Records, sum.Skipped["already_written"], sum.Deduplicated)
		return exchangesBySide(t, out)
	}
	want := feed("c2", "s2", "uninterrupted", false)
	got := feed("c", "s", "restarted", true)
	if len(want) == 0 {
		t.Fatal("the uninterrupted run wrote nothing")
	}
	merged := 0
	for k, n := range want {
		if strings.HasSuffix(k, "/both") {
			merged += n
		}
	}
	if merged == 0 {
		t.Fatalf("the uninterrupted run merged nothing (%v): the test proves nothing", want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d row(s) after a stop and a restart, %d in an uninterrupted run", k, got[k], n)
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %d row(s) after a stop and a restart, none in an uninterrupted run", k, n)
		}
	}
}

// otlpSpan is one MCP client span of an OTLP JSON export request.
func otlpSpan(session, id, startNano string) string {
	return `{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"a1f0c3e5b7d9021` + id + `","name":"tools/call","kind":3,` +
		`"startTimeUnixNano":"` + startNano + `","endTimeUnixNano":"` + startNano[:len(startNano)-9] + `500000000",` +
		`"attributes":[{"key":"mcp.method.name","value":{"stringValue":"tools/call"}},{"key":"gen_ai.tool.name","value":{"stringValue":"get_forecast"}},` +
		`{"key":"jsonrpc.request.id","value":{"stringValue":"1"}},{"key":"mcp.session.id","value":{"stringValue":"` + session + `"}}],"status":{}}`
}

// One Kafka message is one OTLP export request, which batches the spans of
// many sessions; JSON-RPC ids repeat across sessions. The file path gives
// each span its own position (its ordinal), so exchange ids differ; the
// Kafka path gives every record of a message the message's offset, so two
// sessions' "id 1" in one message get one exchange_id, and the sink's
// dedupe by key keeps only one of them when they are written apart.
func TestReviewKafkaOTLPBatchSpansKeepDistinctExchangeIDs(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"otlp": 1}})
	doc := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"agent"}}]},"scopeSpans":[{"scope":{"name":"mcp"},"spans":[` +
		otlpSpan("sess-a", "1", "1780048812000000000") + `,` + otlpSpan("sess-b", "2", "1780048813000000000") + `]}]}]}`
	kafkatest.Produce(t, c.Addrs(), []kafkatest.Record{{Topic: "otlp", Partition: 0, Key: []byte("batch"), Value: []byte(doc)}})
	out := t.TempDir()
	sum := runKafkaUntilCaughtUp(t, c, "g", out, "otlp")
	if sum.Exchanges != 2 {
		t.Fatalf("the run made %d exchanges of two spans", sum.Exchanges)
	}
	db := duck(t)
	var rows, ids int64
	if err := db.QueryRow("SELECT count(*), count(DISTINCT exchange_id) FROM read_parquet('"+filepath.Join(out, "exchanges", "*", "*.parquet")+"')").Scan(&rows, &ids); err != nil {
		t.Fatal(err)
	}
	if rows != 2 || ids != 2 {
		t.Errorf("two spans of two sessions in one message: %d rows in the dataset, %d distinct exchange ids; want 2 and 2 (deduplicated: %d)", rows, ids, sum.Deduplicated)
	}
}

// A producer that writes in transactions (Kafka Connect, Flink, any
// exactly-once producer) leaves a transaction marker after its records:
// the partition's end offset is one past the marker, which no reader
// receives as a message. -kafka-until-caught-up must still end, the marker
// is no record (not a poison message), and an aborted transaction's
// records are not ingested.
func TestReviewKafkaTransactionMarkers(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"mcp": 1}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 1, Records: 50, Sessions: 5})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.TransactionalID("review-txn"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: r.Topic, Partition: 0, Key: r.Key, Value: r.Value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// (Records of an aborted transaction are read too: kafka-go does not
	// filter them out, see the README's Kafka section; not tested here.)
	end := kafkatest.End(t, c.Addrs(), "mcp")
	if end["mcp"][0] <= int64(len(recs)) {
		t.Fatalf("end offset %d after %d records in a transaction: no marker, the test proves nothing", end["mcp"][0], len(recs))
	}

	cfg := pipeline.Config{OutDir: t.TempDir(), Workers: 2, Pseudonyms: testPseudonyms(t), CommitInterval: 100 * time.Millisecond, Log: zerolog.Nop()}
	ko := pipeline.KafkaOptions{UntilCaughtUp: true, Consumer: kafkasrc.Config{Brokers: c.Addrs(), Topics: []string{"mcp"}, Group: "g",
		SessionTimeout: 2 * time.Second, HeartbeatInterval: 200 * time.Millisecond, RebalanceTimeout: 5 * time.Second}}
	rctx, rcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer rcancel()
	sum, err := pipeline.RunKafka(rctx, cfg, ko)
	if err != nil {
		t.Fatalf("RunKafka with -kafka-until-caught-up did not end by itself (end offset %d, %d records): %v", end["mcp"][0], len(recs), err)
	}
	if sum.Observations != int64(len(recs)) || sum.Quarantined != 0 {
		t.Errorf("%d observations; the %d committed records were wanted; quarantined %d", sum.Observations, len(recs), sum.Quarantined)
	}
	if sum.Skipped["kafka_transaction_marker"] != 1 {
		t.Errorf("skipped %v; the transaction's commit marker was wanted there", sum.Skipped)
	}
	db := duck(t)
	var n int64
	var detail string
	db.QueryRow("SELECT count(*), coalesce(string_agg(reason || ' at ' || line || ': ' || detail, '; '), '') FROM read_parquet('"+
		filepath.Join(cfg.OutDir, "quarantine", "*", "*.parquet")+"')").Scan(&n, &detail)
	if n != 0 {
		t.Errorf("the transaction's commit marker, which is no record, is quarantined: %s", detail)
	}
}

// A consumer stopped while the merge still holds rows (waiting for the
// other side's view) drops them for the next owner to replay; the summary
// must still balance (cmd/ingest prints MISMATCH otherwise).
func TestReviewKafkaStopWithHeldRowsBalances(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"c": 1, "s": 1}})
	a := kafkatest.Synth(kafkatest.SynthOptions{Topic: "c", Partitions: 1, Records: 30, Sessions: 3, Seed: 1, Server: true, ServerTopic: "s"})
	client := a[:len(a)/2]
	rc := startReviewConsumer(t, c, "g", t.TempDir(), false, "c", "s")
	kafkatest.Produce(t, c.Addrs(), client)
	rc.waitRead(t, int64(len(client)))
	time.Sleep(500 * time.Millisecond)
	close(rc.stop)
	sum := rc.wait(t)
	if sum.Correlation.Exchanges == 0 {
		t.Fatal("no exchange was made: the test proves nothing")
	}
	if !sum.Balanced() {
		t.Errorf("summary does not balance after a stop: %d records = %d observations + %d quarantined + %d skipped; "+
			"%d observations correlated; %d exchanges + %d merged written, %d made by the correlators",
			sum.Records, sum.Observations, sum.Quarantined, sum.SkippedTotal(), sum.Correlation.Observations,
			sum.Exchanges, sum.Merged, sum.Correlation.Exchanges)
	}
}

// A message the broker accepts (its batch within message.max.bytes,
// 1,048,588) but larger than the consumer's fetch limit (1 MiB): the
// broker hands it over anyway (KIP-74); it must not block its partition.
func TestReviewKafkaMessageLargerThanFetchLimit(t *testing.T) {
	for _, size := range []int{1048490, 4 << 20} {
		t.Run(strconv.Itoa(size), func(t *testing.T) { reviewBigMessage(t, size) })
	}
}

func reviewBigMessage(t *testing.T, size int) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"mcp": 1}})
	big := kafkatest.Record{Topic: "mcp", Partition: 0, Key: []byte("k"), Value: []byte(`{"x":"` + strings.Repeat("a", size) + `"}`)}
	after := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 1, Records: 10, Sessions: 1})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ProducerBatchMaxBytes(8<<20), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	// Log topics often allow larger messages than the broker's default.
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "mcp"
	cfgv := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfgv.Name, cfgv.Value = "max.message.bytes", kmsg.StringPtr("16777216")
	res.Configs = append(res.Configs, cfgv)
	alter.Resources = append(alter.Resources, res)
	if _, err := alter.RequestWith(pctx, cl); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(pctx, &kgo.Record{Topic: big.Topic, Partition: 0, Key: big.Key, Value: big.Value}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	kafkatest.Produce(t, c.Addrs(), after)
	cfg := pipeline.Config{OutDir: t.TempDir(), Workers: 2, Pseudonyms: testPseudonyms(t), CommitInterval: 100 * time.Millisecond, Log: zerolog.Nop()}
	ko := pipeline.KafkaOptions{UntilCaughtUp: true, Consumer: kafkasrc.Config{Brokers: c.Addrs(), Topics: []string{"mcp"}, Group: "g",
		SessionTimeout: 2 * time.Second, HeartbeatInterval: 200 * time.Millisecond, RebalanceTimeout: 5 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	sum, err := pipeline.RunKafka(ctx, cfg, ko)
	if err != nil {
		t.Fatalf("RunKafka: %v", err)
	}
	if sum.Records != int64(1+len(after)) || sum.Quarantined != 1 {
		t.Errorf("read %d records (quarantined %d), want %d (1)", sum.Records, sum.Quarantined, 1+len(after))
	}
}

// A merged row lives in the client's partition's scope; what tells a
// replay of the server's partition that its rows are written must be
// durable with it. Each scope is committed (and uploaded) on its own, so a
// failure between the two (here: the upload of the server scope's
// manifest fails) leaves the merged row published and the server's
// partition replayed from before it: its rows come out a second time,
// server-only.
func TestReviewKafkaS3MergedRowAndServerScopeCommittedApart(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"c": 1, "s": 1}})
	a := kafkatest.Synth(kafkatest.SynthOptions{Topic: "c", Partitions: 1, Records: 3, Sessions: 1, Seed: 1, Server: true, ServerTopic: "s"})
	client, server := a[:len(a)/2], a[len(a)/2:]
	t0, _ := time.Parse(time.RFC3339, "2026-10-17T10:00:00Z")
	later := kafkatest.Synth(kafkatest.SynthOptions{Topic: "c", Partitions: 1, Records: 1, Sessions: 1, Seed: 2, Start: t0.Add(time.Hour)})
	s3 := startReviewS3(t, "traces")
	st := reviewStore(t, s3, "s3://traces/ds")

	rc := startReviewConsumerTo(t, c, "g", t.TempDir(), st, false, "c", "s")
	kafkatest.Produce(t, c.Addrs(), client)
	rc.waitRead(t, int64(len(client)))
	time.Sleep(300 * time.Millisecond)
	kafkatest.Produce(t, c.Addrs(), server)
	rc.waitRead(t, int64(len(client)+len(server)))
	time.Sleep(300 * time.Millisecond)
	// The next commit (the one that publishes the merged rows) fails at the
	// server scope's manifest, after the client scope's upload.
	s3.setFail("/.mcptrace/scopes/" + pipeline.ScopeName(kafkasrc.TopicPartition{Topic: "s", Partition: 0}) + "/")
	kafkatest.Produce(t, c.Addrs(), later)
	select {
	case <-rc.done:
	case <-time.After(10 * time.Second):
		close(rc.stop)
	}
	if err := rc.end(); err == nil {
		t.Fatal("no commit failed: the test proves nothing")
	}
	s3.setFail("")
	startReviewConsumerTo(t, c, "g", t.TempDir(), st, true, "c", "s").wait(t)

	down := t.TempDir()
	if err := st.Download(context.Background(), down); err != nil {
		t.Fatal(err)
	}
	got := exchangesBySide(t, down)
	for k, n := range got {
		if strings.HasSuffix(k, "/server") {
			t.Errorf("%s: %d row(s); the exchange is in the dataset merged already (all rows: %v)", k, n, got)
		}
	}
}

func wireLine(session string, id int, at time.Time, status int) []byte {
	body, _ := json.Marshal(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"q %d"}}}`, id, id))
	resp := `{"status":503,"headers":{"retry-after":"1"},"body":""}`
	if status == 200 {
		rb, _ := json.Marshal(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}`, id))
		resp = `{"status":200,"content_type":"application/json","body":` + string(rb) + `}`
	}
	const layout = "2006-01-02T15:04:05.000Z"
	return []byte(`{"mcptrace":"wire/1","ts":"` + at.Format(layout) + `","end_ts":"` + at.Add(20*time.Millisecond).Format(layout) +
		`","side":"client","transport":"streamable-http","session_id":"` + session + `","protocol_version":"2025-11-25",` +
		`"client":{"name":"bench-agent","version":"1.0.0"},"http":{"request":{"method":"POST","url":"https://mcp.example.com/mcp",` +
		`"headers":{"content-type":"application/json","accept":"application/json, text/event-stream","mcp-session-id":"` + session +
		`","mcp-protocol-version":"2025-11-25"},"body":` + string(body) + `},"response":` + resp + `}}`)
}

// -max-hold closes an active conversation once it has been open that long;
// where it is cut must not depend on how the consumer's fetches happened to
// group the partition's messages. The same records, read as one backlog
// and read as they arrive in small batches (a live consumer, or a replay
// after a restart), must give the same rows.
func TestReviewKafkaMaxHoldCutDependsOnFetchTiming(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"backlog": 1, "live": 1}})
	t0, _ := time.Parse(time.RFC3339, "2026-10-17T10:00:00Z")
	var lines [][]byte
	for k := 1; k <= 120; k++ { // two minutes of one session: a 503, its retry half a second later
		at := t0.Add(time.Duration(k) * time.Second)
		lines = append(lines, wireLine("sess-x", k, at, 503), wireLine("sess-x", k, at.Add(500*time.Millisecond), 200))
	}
	lines = append(lines, wireLine("sess-end", 1, t0.Add(2*time.Hour), 200)) // ends every conversation
	reviewMaxHold = 30 * time.Second
	defer func() { reviewMaxHold = 0 }()
	rows := func(out string) map[string]int {
		db := duck(t)
		r, err := db.Query("SELECT jsonrpc_id || '/' || post_count || '/' || outcome || '/' || hold_cut, count(*) FROM read_parquet('" +
			filepath.Join(out, "exchanges", "*", "*.parquet") + "') WHERE started_at < TIMESTAMP '2026-10-17 11:00:00' GROUP BY 1")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		m := map[string]int{}
		for r.Next() {
			var k string
			var n int
			r.Scan(&k, &n)
			m[k] = n
		}
		return m
	}

	// All at once: read as a backlog.
	kafkatest.Produce(t, c.Addrs(), kafkatest.Keyed("backlog", 1, "x", lines))
	backlog := t.TempDir()
	startReviewConsumer(t, c, "g1", backlog, true, "backlog").wait(t)

	// The same records as they arrive, seven at a time.
	live := t.TempDir()
	rc := startReviewConsumer(t, c, "g2", live, false, "live")
	recs := kafkatest.Keyed("live", 1, "x", lines)
	for i := 0; i < len(recs); i += 7 {
		kafkatest.Produce(t, c.Addrs(), recs[i:min(i+7, len(recs))])
		rc.waitRead(t, int64(min(i+7, len(recs))))
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	close(rc.stop)
	rc.wait(t)

	a, b := rows(backlog), rows(live)
	var diff []string
	for k, n := range a {
		if b[k] != n {
			diff = append(diff, fmt.Sprintf("%s: %d read as a backlog, %d read live", k, n, b[k]))
		}
	}
	for k, n := range b {
		if _, ok := a[k]; !ok {
			diff = append(diff, fmt.Sprintf("%s: none read as a backlog, %d read live", k, n))
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("the same records give other rows (jsonrpc_id/post_count/outcome/hold_cut) depending on how they were fetched:\n%s", strings.Join(diff, "\n"))
	}
}

// A backlog of a client topic and a server topic, replayed partition by
// partition: the client partition, read to its end first, runs an hour
// ahead of the server partition in event time (a later session). Once
// both are read to their end the Merger follows the run's clock; the
// server rows, waiting in their own log's time for a same-id repeat, must
// still reach it before the client rows they pair with are due: every
// exchange seen by both sides is one merged row, as when the topics are
// read side by side.
func TestReviewKafkaBacklogMergesWhenOneTopicRunsAhead(t *testing.T) {
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"c": 1, "s": 1}})
	a := kafkatest.Synth(kafkatest.SynthOptions{Topic: "c", Partitions: 1, Records: 3, Sessions: 1, Seed: 1, Server: true, ServerTopic: "s"})
	t0, _ := time.Parse(time.RFC3339, "2026-10-17T10:00:00Z")
	later := kafkatest.Synth(kafkatest.SynthOptions{Topic: "c", Partitions: 1, Records: 1, Sessions: 1, Seed: 2, Start: t0.Add(time.Hour)})
	kafkatest.Produce(t, c.Addrs(), a)
	kafkatest.Produce(t, c.Addrs(), later)
	for _, untilCaughtUp := range []bool{true, false} {
		out := t.TempDir()
		rc := startReviewConsumer(t, c, fmt.Sprint("g-", untilCaughtUp), out, untilCaughtUp, "c", "s")
		if !untilCaughtUp {
			// A live consumer started on the backlog: once it has read both
			// partitions to their end, the rows go out as time passes.
			rc.waitRead(t, int64(len(a)+len(later)))
			time.Sleep(500 * time.Millisecond)
			close(rc.stop)
		}
		rc.wait(t)
		checkBacklogMerged(t, untilCaughtUp, exchangesBySide(t, out))
	}
}

func checkBacklogMerged(t *testing.T, untilCaughtUp bool, got map[string]int) {
	t.Helper()
	both := 0
	for k, n := range got {
		switch {
		case strings.HasSuffix(k, "/server"):
			t.Errorf("until caught up %v: %s: %d server-only row(s); the exchange was seen by both sides (all rows: %v)", untilCaughtUp, k, n, got)
		case strings.HasSuffix(k, "/both"):
			both += n
		}
	}
	if both == 0 {
		t.Errorf("until caught up %v: no merged row at all: %v", untilCaughtUp, got)
	}
}
