package metrics

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// serve starts Serve on a free loopback port and shuts it down at the end
// of the test.
func serve(t *testing.T, m *Metrics, ready func() error) *Server {
	t.Helper()
	s, err := Serve(context.Background(), "127.0.0.1:0", m, ready)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		http.DefaultClient.CloseIdleConnections()
	})
	return s
}

func scrape(t *testing.T, s *Server) *Snapshot {
	t.Helper()
	snap, err := Scrape(context.Background(), "http://"+s.Addr()+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func wantValue(t *testing.T, snap *Snapshot, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := snap.Value(name, labels)
	if !ok {
		t.Errorf("%s%v: no such series", name, labels)
		return
	}
	if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func wantAbsent(t *testing.T, snap *Snapshot, name string, labels map[string]string) {
	t.Helper()
	if v, ok := snap.Value(name, labels); ok {
		t.Errorf("%s%v = %v, want no series", name, labels, v)
	}
}

type L = map[string]string

// Every collector, updated through the API, reads back over real HTTP with
// the values it was given.
func TestScrapeEveryCollector(t *testing.T) {
	m := New()
	s := serve(t, m, nil)

	// Before any event: the series with known labels exist at 0.
	snap := scrape(t, s)
	for _, why := range []string{DupRedelivered, DupAlreadyWritten} {
		wantValue(t, snap, "mcptrace_duplicates_dropped_total", L{"why": why}, 0)
	}
	for _, kind := range []string{CommitDataset, CommitKafka, CommitUpload} {
		wantValue(t, snap, "mcptrace_commits_total", L{"kind": kind}, 0)
		wantValue(t, snap, "mcptrace_commit_errors_total", L{"kind": kind}, 0)
	}
	wantValue(t, snap, "mcptrace_open_conversations", nil, 0)
	wantValue(t, snap, "mcptrace_rebalances_total", nil, 0)

	file := m.Input(KindFile)
	file.Read(3, 300)
	file.Read(2, 50)
	file.Read(-1, -5) // ignored, never a panic
	m.Input(KindStdin).Read(1, 7)

	p0 := m.Partition("client", 0)
	p0.Message(10, 100, 40) // lag 100-10-1 = 89
	p0.Message(11, 100, 60) // lag 88
	p0.SetCommitted(12)
	p3 := m.Partition("server", 3)
	p3.Read(5, 500)
	p3.SetLag(7)
	p3.SetLag(-2) // clamped to 0
	p3.SetCommitted(1234567)
	m.Partition("server", 4).Message(99, 100, 1) // caught up: lag 0

	m.ExchangesOut("SUCCESS", 4)
	m.ExchangesOut("TOOL_ERROR", 1)
	m.ExchangesOut("SUCCESS", 2)
	m.ExchangesOut("HTTP_ERROR", 0) // nothing written: no increment
	m.Quarantined("json_syntax", 2)
	m.Quarantined("no_id", 1)
	m.DuplicatesDropped(DupRedelivered, 5)
	m.DuplicatesDropped(DupAlreadyWritten, 3)
	m.SetOpenConversations(10)
	m.AddOpenConversations(-3)
	m.AddOpenConversations(2)
	m.SetUncommitted(100)
	m.AddUncommitted(-40)
	m.ObserveFlush(2 * time.Millisecond)
	m.ObserveFlush(3 * time.Second)
	m.ObserveFlush(2 * time.Minute) // past the last bucket
	m.Commit(CommitDataset, nil)
	m.Commit(CommitDataset, nil)
	m.Commit(CommitKafka, nil)
	m.Commit(CommitUpload, errors.New("503 Slow Down"))
	m.Commit(CommitKafka, errors.New("rebalance in progress"))
	m.Commit(CommitKafka, errors.New("rebalance in progress"))
	m.Rebalance()
	m.Rebalance()
	m.SetAssignedPartitions(3)

	snap = scrape(t, s)
	fileL := L{"source_kind": "file", "topic": "", "partition": ""}
	wantValue(t, snap, "mcptrace_records_in_total", fileL, 5)
	wantValue(t, snap, "mcptrace_bytes_in_total", fileL, 350)
	wantValue(t, snap, "mcptrace_records_in_total", L{"source_kind": "stdin"}, 1)
	wantValue(t, snap, "mcptrace_bytes_in_total", L{"source_kind": "stdin"}, 7)
	c0 := L{"source_kind": "kafka", "topic": "client", "partition": "0"}
	wantValue(t, snap, "mcptrace_records_in_total", c0, 2)
	wantValue(t, snap, "mcptrace_bytes_in_total", c0, 100)
	s3 := L{"source_kind": "kafka", "topic": "server", "partition": "3"}
	wantValue(t, snap, "mcptrace_records_in_total", s3, 5)
	wantValue(t, snap, "mcptrace_bytes_in_total", s3, 500)
	if sum, n := snap.Sum("mcptrace_records_in_total", L{"source_kind": "kafka"}); sum != 8 || n != 3 {
		t.Errorf("kafka records in: sum %v over %d series, want 8 over 3", sum, n)
	}
	if sum, n := snap.Sum("mcptrace_records_in_total", nil); sum != 14 || n != 5 {
		t.Errorf("all records in: sum %v over %d series, want 14 over 5", sum, n)
	}

	wantValue(t, snap, "mcptrace_partition_lag", L{"topic": "client", "partition": "0"}, 88)
	wantValue(t, snap, "mcptrace_partition_lag", L{"topic": "server", "partition": "3"}, 0)
	wantValue(t, snap, "mcptrace_partition_lag", L{"topic": "server", "partition": "4"}, 0)
	wantValue(t, snap, "mcptrace_committed_offset", L{"topic": "client", "partition": "0"}, 12)
	wantValue(t, snap, "mcptrace_committed_offset", L{"topic": "server", "partition": "3"}, 1234567)

	wantValue(t, snap, "mcptrace_exchanges_out_total", L{"outcome": "SUCCESS"}, 6)
	wantValue(t, snap, "mcptrace_exchanges_out_total", L{"outcome": "TOOL_ERROR"}, 1)
	wantValue(t, snap, "mcptrace_exchanges_out_total", L{"outcome": "HTTP_ERROR"}, 0)
	wantValue(t, snap, "mcptrace_quarantined_total", L{"reason": "json_syntax"}, 2)
	wantValue(t, snap, "mcptrace_quarantined_total", L{"reason": "no_id"}, 1)
	wantValue(t, snap, "mcptrace_duplicates_dropped_total", L{"why": DupRedelivered}, 5)
	wantValue(t, snap, "mcptrace_duplicates_dropped_total", L{"why": DupAlreadyWritten}, 3)
	wantValue(t, snap, "mcptrace_open_conversations", nil, 9)
	wantValue(t, snap, "mcptrace_records_uncommitted", nil, 60)
	wantValue(t, snap, "mcptrace_commits_total", L{"kind": CommitDataset}, 2)
	wantValue(t, snap, "mcptrace_commits_total", L{"kind": CommitKafka}, 1)
	wantValue(t, snap, "mcptrace_commits_total", L{"kind": CommitUpload}, 0)
	wantValue(t, snap, "mcptrace_commit_errors_total", L{"kind": CommitDataset}, 0)
	wantValue(t, snap, "mcptrace_commit_errors_total", L{"kind": CommitKafka}, 2)
	wantValue(t, snap, "mcptrace_commit_errors_total", L{"kind": CommitUpload}, 1)
	wantValue(t, snap, "mcptrace_rebalances_total", nil, 2)
	wantValue(t, snap, "mcptrace_assigned_partitions", nil, 3)

	count, sum, ok := snap.HistogramCount("mcptrace_file_flush_seconds", nil)
	if !ok || count != 3 || sum < 123.001 || sum > 123.003 {
		t.Errorf("flush histogram: count %d sum %v ok %v, want 3, 123.002, true", count, sum, ok)
	}
	h := snap.Families()["mcptrace_file_flush_seconds"].GetMetric()[0].GetHistogram()
	buckets := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		buckets[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for le, want := range map[float64]uint64{0.001: 0, 0.0025: 1, 2.5: 1, 5: 2, 60: 2, math.Inf(1): 3} {
		if got, ok := buckets[le]; !ok || got != want {
			t.Errorf("flush bucket le=%v: %d (present %v), want %d", le, got, ok, want)
		}
	}
	if len(buckets) != len(flushBuckets)+1 {
		t.Errorf("flush histogram has %d buckets, want %d and +Inf", len(buckets), len(flushBuckets))
	}

	// The Go runtime and process collectors are in the same registry.
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if _, ok := snap.Families()[name]; !ok {
			t.Errorf("%s missing from /metrics", name)
		}
	}
	// The scrapes themselves are counted.
	if _, ok := snap.Families()["promhttp_metric_handler_requests_total"]; !ok {
		t.Error("promhttp_metric_handler_requests_total missing from /metrics")
	}
}

// The exposition parses with expfmt directly, in the text format a plain
// Prometheus scrape asks for.
func TestMetricsTextFormat(t *testing.T) {
	m := New()
	m.ExchangesOut("JSONRPC_ERROR", 1)
	s := serve(t, m, nil)
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want text/plain", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	f := fams["mcptrace_exchanges_out_total"]
	if f == nil || f.GetType().String() != "COUNTER" || len(f.GetMetric()) != 1 ||
		f.GetMetric()[0].GetCounter().GetValue() != 1 || f.GetHelp() == "" {
		t.Errorf("mcptrace_exchanges_out_total: %v", f)
	}
	for name, fam := range fams {
		if strings.HasPrefix(name, "mcptrace_") && fam.GetHelp() == "" {
			t.Errorf("%s has no help text", name)
		}
	}
}

// A revoked partition's lag and committed offset disappear; its counters
// stay; a handle from before the revocation cannot bring the gauges back; a
// new assignment can.
func TestRevokePartition(t *testing.T) {
	m := New()
	s := serve(t, m, nil)
	old := m.Partition("t", 1)
	old.Message(5, 10, 3)
	old.SetCommitted(6)
	keep := m.Partition("t", 2)
	fresh := m.Partition("t", 3)
	fresh.Read(1, 1)
	snap := scrape(t, s)
	// Assigned, nothing known yet: no lag claiming "caught up", no commit
	// claiming offset 0.
	wantAbsent(t, snap, "mcptrace_partition_lag", L{"topic": "t", "partition": "3"})
	wantAbsent(t, snap, "mcptrace_committed_offset", L{"topic": "t", "partition": "3"})
	wantValue(t, snap, "mcptrace_partition_lag", L{"topic": "t", "partition": "1"}, 4)
	wantValue(t, snap, "mcptrace_committed_offset", L{"topic": "t", "partition": "1"}, 6)
	keep.SetLag(4)
	keep.SetCommitted(40)

	m.RevokePartition("t", 1)
	m.RevokePartition("t", 9) // never assigned: nothing happens
	old.SetLag(1000)          // stale goroutine of an old generation
	old.SetCommitted(1000)
	old.Message(6, 10, 1)

	snap = scrape(t, s)
	tp1 := L{"topic": "t", "partition": "1"}
	wantAbsent(t, snap, "mcptrace_partition_lag", tp1)
	wantAbsent(t, snap, "mcptrace_committed_offset", tp1)
	wantValue(t, snap, "mcptrace_partition_lag", L{"topic": "t", "partition": "2"}, 4)
	wantValue(t, snap, "mcptrace_committed_offset", L{"topic": "t", "partition": "2"}, 40)
	// Counters are totals of what was read, before and after.
	wantValue(t, snap, "mcptrace_records_in_total", L{"source_kind": "kafka", "topic": "t", "partition": "1"}, 2)

	again := m.Partition("t", 1)
	if again == old {
		t.Fatal("Partition after RevokePartition returned the revoked handle")
	}
	if m.Partition("t", 1) != again {
		t.Error("Partition twice for one assignment returned two handles")
	}
	again.SetLag(2)
	snap = scrape(t, s)
	wantValue(t, snap, "mcptrace_partition_lag", tp1, 2)
	wantAbsent(t, snap, "mcptrace_committed_offset", tp1)
}

// Every method of a nil *Metrics and of the nil handles it returns is a
// no-op. The test calls all exported methods by reflection, so a method
// added later is covered too.
func TestNilSafe(t *testing.T) {
	var m *Metrics
	if m.Input(KindFile) != nil || m.Partition("t", 0) != nil || m.Registry() != nil {
		t.Fatal("a nil *Metrics returned a non-nil handle")
	}
	for _, v := range []any{m, m.Input(KindFile), m.Partition("t", 0)} {
		rv := reflect.ValueOf(v)
		rt := rv.Type()
		if rt.NumMethod() == 0 {
			t.Fatalf("%v has no methods", rt)
		}
		for i := 0; i < rt.NumMethod(); i++ {
			meth := rt.Method(i)
			args := []reflect.Value{rv}
			for j := 1; j < meth.Type.NumIn(); j++ {
				args = append(args, reflect.Zero(meth.Type.In(j)))
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("(%v).%s on nil panicked: %v", rt, meth.Name, r)
					}
				}()
				meth.Func.Call(args)
			}()
		}
	}
	// Some non-zero arguments too.
	m.Commit(CommitKafka, errors.New("x"))
	m.ExchangesOut("SUCCESS", 3)
	m.Partition("t", 0).Message(1, 2, 3)

	if _, err := Serve(context.Background(), "127.0.0.1:0", nil, nil); err == nil {
		t.Error("Serve with nil metrics: no error")
	}
}

// Metrics of two New calls are independent (no global registry).
func TestIndependentRegistries(t *testing.T) {
	a, b := New(), New()
	a.Rebalance()
	sa := scrape(t, serve(t, a, nil))
	sb := scrape(t, serve(t, b, nil))
	wantValue(t, sa, "mcptrace_rebalances_total", nil, 1)
	wantValue(t, sb, "mcptrace_rebalances_total", nil, 0)
}

// Parse rejects what is not the text format, with an error.
func TestParseError(t *testing.T) {
	_, err := Parse(strings.NewReader("mcptrace_x{a=\"1\" 3\n"))
	if err == nil {
		t.Fatal("no error for a broken exposition")
	}
	if _, err := Parse(io.MultiReader()); err != nil {
		t.Errorf("empty exposition: %v", err)
	}
}

// Goroutines of an old generation updating a partition while it is revoked
// and assigned again: no race, no revoked series left behind, and the new
// handle's values are the ones exported.
func TestRevokeWhileUpdating(t *testing.T) {
	m := New()
	for round := range 20 {
		old := m.Partition("t", 0)
		done := make(chan struct{})
		for g := range 4 {
			go func() {
				defer func() { done <- struct{}{} }()
				for i := range 200 {
					old.Message(int64(i), 1000, 1)
					old.SetCommitted(int64(g*1000 + i))
				}
			}()
		}
		m.RevokePartition("t", 0)
		for range 4 {
			<-done
		}
		snap, err := gather(m)
		if err != nil {
			t.Fatal(err)
		}
		tp := L{"topic": "t", "partition": "0"}
		wantAbsent(t, snap, "mcptrace_partition_lag", tp)
		wantAbsent(t, snap, "mcptrace_committed_offset", tp)
		wantValue(t, snap, "mcptrace_records_in_total",
			L{"source_kind": "kafka", "topic": "t", "partition": "0"}, float64((round+1)*800))

		m.Partition("t", 0).SetCommitted(int64(round))
		snap, err = gather(m)
		if err != nil {
			t.Fatal(err)
		}
		wantValue(t, snap, "mcptrace_committed_offset", tp, float64(round))
		m.RevokePartition("t", 0)
	}
}

// gather reads m's registry through the text format without HTTP.
func gather(m *Metrics) (*Snapshot, error) {
	fams, err := m.Registry().Gather()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			return nil, err
		}
	}
	return Parse(strings.NewReader(b.String()))
}
