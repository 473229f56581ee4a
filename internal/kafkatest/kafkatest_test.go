package kafkatest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/segmentio/kafka-go"
	"github.com/tidwall/gjson"
)

// fnvPartition is Sarama's hash partitioner written out from its
// definition (FNV-1a 32, as int32, modulo n, absolute value), to check
// that PartitionFor calls kafka-go's balancer the way a producer does.
func fnvPartition(key []byte, n int) int32 {
	h := fnv.New32a()
	h.Write(key)
	p := int32(h.Sum32()) % int32(n)
	if p < 0 {
		p = -p
	}
	return p
}

func TestSynthKeysAndPartitions(t *testing.T) {
	recs := Synth(SynthOptions{Topic: "mcp", Partitions: 6, Records: 5000, Sessions: 50})
	if n := len(recs); n < 4990 || n > 5000 {
		t.Fatalf("Synth gave %d records for a target of 5000", n)
	}
	partOf := map[string]int32{}
	perPart := map[int32]int{}
	for i, r := range recs {
		if r.Topic != "mcp" {
			t.Fatalf("record %d: topic %q", i, r.Topic)
		}
		if !json.Valid(r.Value) || bytes.IndexByte(r.Value, '\n') >= 0 {
			t.Fatalf("record %d is not one JSON line: %q", i, r.Value)
		}
		sess := gjson.GetBytes(r.Value, "session_id").String()
		if sess == "" || string(r.Key) != sess {
			t.Fatalf("record %d: key %q, session_id %q", i, r.Key, sess)
		}
		if hdr := gjson.GetBytes(r.Value, "http.request.headers.mcp-session-id").String(); hdr != sess {
			t.Fatalf("record %d: mcp-session-id %q, session_id %q", i, hdr, sess)
		}
		if want := fnvPartition(r.Key, 6); r.Partition != want {
			t.Fatalf("record %d key %q: partition %d, FNV-1a gives %d", i, r.Key, r.Partition, want)
		}
		if p, ok := partOf[sess]; ok && p != r.Partition {
			t.Fatalf("session %s is on partitions %d and %d", sess, p, r.Partition)
		}
		partOf[sess] = r.Partition
		perPart[r.Partition]++
	}
	if len(partOf) != 50 {
		t.Errorf("%d sessions, want 50", len(partOf))
	}
	if len(perPart) != 6 {
		t.Errorf("records fall on %d of 6 partitions: %v", len(perPart), perPart)
	}

	// The same options give the same records; another seed gives other
	// sessions, with the same shape.
	again := Synth(SynthOptions{Topic: "mcp", Partitions: 6, Records: 5000, Sessions: 50})
	if len(again) != len(recs) || !bytes.Equal(again[len(again)-1].Value, recs[len(recs)-1].Value) {
		t.Errorf("Synth is not deterministic")
	}
	seeded := Synth(SynthOptions{Topic: "mcp", Partitions: 6, Records: 5000, Sessions: 50, Seed: 7})
	if len(seeded) != len(recs) {
		t.Fatalf("seed 7: %d records, seed 0: %d", len(seeded), len(recs))
	}
	for i, r := range seeded {
		if !strings.HasPrefix(string(r.Key), "s7-") || gjson.GetBytes(r.Value, "http.request.headers.mcp-session-id").String() != string(r.Key) {
			t.Fatalf("seed 7 record %d: key %q in %s", i, r.Key, r.Value)
		}
	}
}

func TestSynthRecordsTarget(t *testing.T) {
	for _, n := range []int{1, 2, 11, 12, 13, 999, 20000} {
		got := len(Synth(SynthOptions{Topic: "t", Partitions: 1, Records: n}))
		if got > n && n > 1 || got < n-1 {
			t.Errorf("Records %d: got %d", n, got)
		}
	}
}

func TestSynthServerView(t *testing.T) {
	recs := Synth(SynthOptions{Topic: "c", Partitions: 4, Records: 2000, Server: true})
	var cli, srv []Record
	for _, r := range recs {
		switch r.Topic {
		case "c":
			cli = append(cli, r)
		case "c-server":
			srv = append(srv, r)
		default:
			t.Fatalf("topic %q", r.Topic)
		}
	}
	if len(cli) != len(srv) || len(cli) == 0 {
		t.Fatalf("%d client and %d server records", len(cli), len(srv))
	}
	ms := func(v []byte, f string) time.Time {
		at, err := time.Parse(time.RFC3339Nano, gjson.GetBytes(v, f).String())
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	for i := range cli {
		c, s := cli[i], srv[i]
		if !bytes.Equal(c.Key, s.Key) || c.Partition != s.Partition {
			t.Fatalf("line %d: client %q/%d, server %q/%d: not co-partitioned", i, c.Key, c.Partition, s.Key, s.Partition)
		}
		if gjson.GetBytes(s.Value, "side").String() != "server" || gjson.GetBytes(c.Value, "side").String() != "client" {
			t.Fatalf("line %d: sides %s / %s", i, c.Value, s.Value)
		}
		if d := ms(s.Value, "ts").Sub(ms(c.Value, "ts")); d != 2*time.Millisecond {
			t.Fatalf("line %d: server ts %v after the client's", i, d)
		}
		if d := ms(c.Value, "end_ts").Sub(ms(s.Value, "end_ts")); d != 2*time.Millisecond {
			t.Fatalf("line %d: server end_ts %v before the client's", i, d)
		}
		if gjson.GetBytes(s.Value, "http").Raw != gjson.GetBytes(c.Value, "http").Raw {
			t.Fatalf("line %d: the server saw another transaction", i)
		}
	}
}

func TestKeyOf(t *testing.T) {
	for _, c := range []struct{ line, key string }{
		{`{"session_id":"a","connection":"x"}`, "a"},
		{`{"connection":"x","http":{"request":{"headers":{"Mcp-Session-Id":"h"}}}}`, "h"},
		{`{"connection":"x","http":{"request":{"headers":{"mcp-session-id":["h1","h2"]}}}}`, "h1"},
		{`{"connection":"x","http":{"request":{"url":"http://h/messages?sessionId=q"}}}`, "q"},
		{`{"connection":"x","stdio":{"direction":"c2s","line":"{}"}}`, "x"},
		{`{"side":"client"}`, ""},
		{"\x00\xff", ""},
	} {
		if got := string(KeyOf([]byte(c.line))); got != c.key {
			t.Errorf("KeyOf(%s) = %q, want %q", c.line, got, c.key)
		}
	}
	// key-less lines take the fallback, so one log's stay together
	recs := Keyed("t", 8, "file-a", [][]byte{[]byte(`{"side":"client"}`), nil, []byte(`{"session_id":"s"}`)})
	if len(recs) != 2 || string(recs[0].Key) != "file-a" || string(recs[1].Key) != "s" {
		t.Fatalf("Keyed: %+v", recs)
	}
	if recs[0].Partition != fnvPartition([]byte("file-a"), 8) {
		t.Errorf("fallback partition %d", recs[0].Partition)
	}
}

func TestPoison(t *testing.T) {
	p := Poison("t", 2, []byte("k"))
	if p.Topic != "t" || p.Partition != 2 || string(p.Key) != "k" {
		t.Fatalf("Poison coordinates: %+v", p)
	}
	if json.Valid(p.Value) || utf8.Valid(p.Value) || bytes.ContainsAny(p.Value, "\r\n{") || bytes.HasPrefix(p.Value, []byte{0x1f, 0x8b}) {
		t.Errorf("Poison value %q is readable as something", p.Value)
	}
	w := PoisonWire("t", 2, []byte("k"))
	if json.Valid(w.Value) || !bytes.Contains(w.Value, []byte(`"mcptrace":"wire/1"`)) || bytes.ContainsAny(w.Value, "\r\n") {
		t.Errorf("PoisonWire value %q is not a broken wire line", w.Value)
	}
}

// readPartition reads n messages from one partition with a kafka-go
// Reader, from offset 0.
func readPartition(t *testing.T, addrs []string, topic string, p int32, n int) []kafka.Message {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, Partition: int(p), MaxBytes: 10 << 20, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	msgs := make([]kafka.Message, 0, n)
	for len(msgs) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reading %s/%d after %d of %d messages: %v", topic, p, len(msgs), n, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func byPartition(recs []Record) map[string][]Record {
	out := map[string][]Record{}
	for _, r := range recs {
		k := PartitionKey(r.Topic, r.Partition)
		out[k] = append(out[k], r)
	}
	return out
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestProduceReadBack produces Synth records (and poison) and reads every
// partition back with kafka-go: same keys, values and order, each on the
// partition kafka.Hash gives its key; End counts them; WriteFiles holds
// the same values in the same order.
func TestProduceReadBack(t *testing.T) {
	c := Start(t, Options{Topics: map[string]int{"mcp": 6, "mcp-server": 6}})
	recs := Synth(SynthOptions{Topic: "mcp", Partitions: 6, Records: 3000, Sessions: 40, Server: true})
	recs = append(recs, Poison("mcp", 3, []byte("bad")), PoisonWire("mcp", PartitionFor([]byte("sess-0001"), 6), []byte("sess-0001")))
	offs := Produce(t, c.Addrs(), recs)

	parts := byPartition(recs)
	next := map[string]int64{}
	for i, r := range recs {
		k := PartitionKey(r.Topic, r.Partition)
		if offs[i] != next[k] {
			t.Fatalf("record %d on %s got offset %d, want %d", i, k, offs[i], next[k])
		}
		next[k]++
	}
	end := End(t, c.Addrs(), "mcp", "mcp-server")
	for _, topic := range []string{"mcp", "mcp-server"} {
		if len(end[topic]) != 6 {
			t.Fatalf("End %s: %v", topic, end[topic])
		}
		for p := int32(0); p < 6; p++ {
			if want := int64(len(parts[PartitionKey(topic, p)])); end[topic][p] != want {
				t.Errorf("End %s/%d = %d, produced %d", topic, p, end[topic][p], want)
			}
		}
	}

	files := WriteFiles(t, t.TempDir(), recs)
	if len(files) != len(parts) {
		t.Fatalf("WriteFiles wrote %d files for %d partitions", len(files), len(parts))
	}
	for k, want := range parts {
		got := readPartition(t, c.Addrs(), want[0].Topic, want[0].Partition, len(want))
		lines := readLines(t, files[k])
		if len(lines) != len(want) {
			t.Fatalf("%s: %d lines in %s, %d records", k, len(lines), files[k], len(want))
		}
		for i, m := range got {
			w := want[i]
			if m.Offset != int64(i) || !bytes.Equal(m.Key, w.Key) || !bytes.Equal(m.Value, w.Value) || int32(m.Partition) != w.Partition {
				t.Fatalf("%s offset %d: read key %q (partition %d, offset %d), produced key %q", k, i, m.Key, m.Partition, m.Offset, w.Key)
			}
			if !bytes.Equal(m.Key, []byte("bad")) && int32(m.Partition) != fnvPartition(m.Key, 6) {
				t.Fatalf("%s offset %d: key %q is not where kafka.Hash puts it", k, i, m.Key)
			}
			if !bytes.Equal(lines[i], m.Value) {
				t.Fatalf("%s line %d differs from the message at offset %d", files[k], i+1, i)
			}
		}
	}
}

func TestProduceUnknownTopicFails(t *testing.T) {
	c := Start(t, Options{Topics: map[string]int{"a": 1}})
	_, err := produce(c.Addrs(), []Record{{Topic: "a", Partition: 5, Value: []byte("x")}})
	if err == nil {
		t.Fatal("producing to partition 5 of a 1-partition topic succeeded")
	}
	if _, err := end(t.Context(), c.Addrs(), []string{"nope"}); err == nil {
		t.Fatal("End of a missing topic succeeded")
	}
}

// consumeAndCommit joins group with a kafka-go Reader on topic, reads n
// messages and commits each synchronously.
func consumeAndCommit(t *testing.T, addrs []string, group, topic string, n int) {
	t.Helper()
	if err := consume(t.Context(), addrs, group, topic, n); err != nil {
		t.Fatal(err)
	}
}

func consume(ctx context.Context, addrs []string, group, topic string, n int) error {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: addrs, GroupID: group, Topic: topic,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: time.Second, RebalanceTimeout: 5 * time.Second,
		MaxWait: 100 * time.Millisecond, StartOffset: kafka.FirstOffset,
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for i := 0; i < n; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return fmt.Errorf("group %s: fetch %d of %d: %w", group, i, n, err)
		}
		if err := r.CommitMessages(ctx, m); err != nil {
			return fmt.Errorf("group %s: commit: %w", group, err)
		}
	}
	return nil
}

// fakeT records a Fatalf and ends the goroutine, as testing.T does, so a
// test can check that a helper fails when it should.
type fakeT struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func TestCommitted(t *testing.T) {
	c := Start(t, Options{Topics: map[string]int{"mcp": 3}})
	recs := Synth(SynthOptions{Topic: "mcp", Partitions: 3, Records: 600, Sessions: 12})
	Produce(t, c.Addrs(), recs)
	if got := Committed(t, c.Addrs(), "g"); len(got) != 0 {
		t.Fatalf("a group that never committed has %v", got)
	}

	// A part of the records first: the commits are below the end.
	consumeAndCommit(t, c.Addrs(), "g", "mcp", 100)
	end := End(t, c.Addrs(), "mcp")
	part := Committed(t, c.Addrs(), "g", "mcp")
	var sum int64
	for p, off := range part["mcp"] {
		if off <= 0 || off > end["mcp"][p] {
			t.Errorf("partition %d: committed %d, end %d", p, off, end["mcp"][p])
		}
		sum += off
	}
	if sum != 100 {
		t.Errorf("after 100 records the commits add up to %d (%s)", sum, Format(part))
	}
	if Reached(part, end) {
		t.Errorf("Reached(%s, %s) after 100 of %d records", Format(part), Format(end), len(recs))
	}

	// WaitCommitted fails when the commits never get there.
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		WaitCommitted(ft, ctx, c.Addrs(), "g", end)
	}()
	<-done
	if !strings.Contains(ft.msg, "before the commits reached") {
		t.Errorf("WaitCommitted below the end: %q", ft.msg)
	}

	// The rest: the commits reach the end, and WaitCommitted sees it.
	errc := make(chan error, 1)
	go func() { errc <- consume(t.Context(), c.Addrs(), "g", "mcp", len(recs)-100) }()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	got := WaitCommitted(t, ctx, c.Addrs(), "g", end)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if Format(got) != Format(end) {
		t.Errorf("committed %s, end %s", Format(got), Format(end))
	}
	if other := Committed(t, c.Addrs(), "g", "other-topic"); len(other) != 0 {
		t.Errorf("commits for a topic the group never read: %v", other)
	}
}

// TestRestart: a restarted cluster keeps its records and committed offsets
// on the same addresses, goes on numbering offsets where it stopped, and a
// kafka-go Reader connected across the restart reads on by itself.
func TestRestart(t *testing.T) {
	c := Start(t, Options{Topics: map[string]int{"mcp": 2}})
	addrs := c.Addrs()
	recs := Synth(SynthOptions{Topic: "mcp", Partitions: 2, Records: 400, Sessions: 8})
	Produce(t, addrs, recs)
	consumeAndCommit(t, addrs, "g", "mcp", 150)
	endBefore, commBefore := End(t, addrs, "mcp"), Committed(t, addrs, "g", "mcp")
	if len(commBefore["mcp"]) == 0 {
		t.Fatal("nothing committed before the restart")
	}

	// a reader connected before the restart, on partition 0
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: "mcp", Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	rctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for i := int64(0); i < endBefore["mcp"][0]; i++ {
		if _, err := r.ReadMessage(rctx); err != nil {
			t.Fatal(err)
		}
	}

	c.Restart(t)
	if fmt.Sprint(c.Addrs()) != fmt.Sprint(addrs) {
		t.Fatalf("addresses changed: %v, then %v", addrs, c.Addrs())
	}
	if got := End(t, addrs, "mcp"); Format(got) != Format(endBefore) {
		t.Errorf("end offsets %s before the restart, %s after", Format(endBefore), Format(got))
	}
	if got := Committed(t, addrs, "g", "mcp"); Format(got) != Format(commBefore) {
		t.Errorf("committed %s before the restart, %s after", Format(commBefore), Format(got))
	}
	parts := byPartition(recs)
	for p := int32(0); p < 2; p++ {
		want := parts[PartitionKey("mcp", p)]
		got := readPartition(t, addrs, "mcp", p, len(want))
		for i := range got {
			if !bytes.Equal(got[i].Value, want[i].Value) {
				t.Fatalf("partition %d offset %d changed across the restart", p, i)
			}
		}
	}

	more := Synth(SynthOptions{Topic: "mcp", Partitions: 2, Records: 100, Sessions: 8, Seed: 2})
	offs := Produce(t, addrs, more)
	for i, m := range more {
		if m.Partition == 0 {
			if offs[i] < endBefore["mcp"][0] {
				t.Fatalf("offset %d after the restart reuses one below the end %d", offs[i], endBefore["mcp"][0])
			}
			msg, err := r.ReadMessage(rctx)
			if err != nil {
				t.Fatalf("the reader connected before the restart: %v", err)
			}
			if msg.Offset != offs[i] || !bytes.Equal(msg.Value, m.Value) {
				t.Fatalf("the reader connected before the restart read offset %d, produced %d", msg.Offset, offs[i])
			}
		}
	}

	// The group carries on from its committed offsets.
	consumeAndCommit(t, addrs, "g", "mcp", len(recs)+len(more)-150)
	ctx, cancel2 := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel2()
	final := WaitCommitted(t, ctx, addrs, "g", End(t, addrs, "mcp"))
	if Format(final) != Format(End(t, addrs, "mcp")) {
		t.Errorf("after the restart the group committed %s", Format(final))
	}
}

func TestStopRefusesThenResume(t *testing.T) {
	c := Start(t, Options{Topics: map[string]int{"t": 1}, Brokers: 2})
	if len(c.Addrs()) != 2 {
		t.Fatalf("2 brokers, addresses %v", c.Addrs())
	}
	Produce(t, c.Addrs(), []Record{{Topic: "t", Partition: 0, Value: []byte("one")}})
	c.Stop()
	if c.Kfake() != nil {
		t.Fatal("Kfake is not nil while stopped")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, err := end(ctx, c.Addrs(), []string{"t"}); err == nil {
		t.Fatal("a stopped cluster answered")
	}
	c.Resume(t)
	if got := End(t, c.Addrs(), "t"); got["t"][0] != 1 {
		t.Fatalf("after Resume the end is %s", Format(got))
	}
	c.Close()
	c.Close()
}

func TestStartRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Topics: map[string]int{"t": 0}},
		{Brokers: 2, Ports: []int{0}},
	} {
		ft := &fakeT{TB: t}
		done := make(chan struct{})
		go func() { defer close(done); Start(ft, o) }()
		<-done
		if !strings.HasPrefix(ft.msg, "kafkatest: ") {
			t.Errorf("Start(%+v) did not fail: %q", o, ft.msg)
		}
	}
}

func BenchmarkProduce100k(b *testing.B) {
	c := Start(b, Options{Topics: map[string]int{"mcp": 6}})
	recs := Synth(SynthOptions{Topic: "mcp", Partitions: 6, Records: 100000})
	var bytes int64
	for _, r := range recs {
		bytes += int64(len(r.Value))
	}
	b.SetBytes(bytes)
	b.ResetTimer()
	for b.Loop() {
		Produce(b, c.Addrs(), recs)
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkSynth100k(b *testing.B) {
	for b.Loop() {
		Synth(SynthOptions{Topic: "mcp", Partitions: 6, Records: 100000})
	}
}

// TestGroupMemberAcrossRestart: a kafka-go group member connected while
// the cluster restarts reconnects, rejoins and consumes to the end by
// itself (commits that fail while the broker is down are retried, as a
// consumer must), so Restart is a broker restart as clients see it.
func TestGroupMemberAcrossRestart(t *testing.T) {
	c := Start(t, Options{Topics: map[string]int{"mcp": 4}})
	addrs := c.Addrs()
	Produce(t, addrs, Synth(SynthOptions{Topic: "mcp", Partitions: 4, Records: 2000}))
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: addrs, GroupID: "g", Topic: "mcp",
		SessionTimeout: 6 * time.Second, HeartbeatInterval: time.Second, RebalanceTimeout: 5 * time.Second,
		MaxWait: 100 * time.Millisecond, StartOffset: kafka.FirstOffset,
	})
	ctx, cancel := context.WithCancel(t.Context())
	var (
		mu      sync.Mutex
		fetched int
	)
	done := make(chan error, 1)
	go func() {
		for {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				done <- err
				return
			}
			mu.Lock()
			fetched++
			mu.Unlock()
			for r.CommitMessages(ctx, m) != nil {
				if ctx.Err() != nil {
					done <- ctx.Err()
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	defer func() {
		cancel()
		<-done
		r.Close()
	}()
	for {
		mu.Lock()
		n := fetched
		mu.Unlock()
		if n >= 500 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.Restart(t)
	Produce(t, addrs, Synth(SynthOptions{Topic: "mcp", Partitions: 4, Records: 500, Seed: 3}))
	wctx, wcancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer wcancel()
	end := End(t, addrs, "mcp")
	if got := WaitCommitted(t, wctx, addrs, "g", end); Format(got) != Format(end) {
		t.Errorf("committed %s, end %s", Format(got), Format(end))
	}
	var total int64
	for _, off := range end["mcp"] {
		total += off
	}
	mu.Lock()
	if int64(fetched) < total {
		t.Errorf("fetched %d messages of %d", fetched, total)
	}
	t.Logf("fetched %d messages for %d records (redelivered after the restart: %d)", fetched, total, int64(fetched)-total)
	mu.Unlock()
}

// TestWaitGroupEmpty: a group nobody joined is empty; while a member reads
// WaitGroupEmpty fails naming it; once the member has left it returns.
func TestWaitGroupEmpty(t *testing.T) {
	c := Start(t, Options{Topics: map[string]int{"mcp": 2}})
	recs := Synth(SynthOptions{Topic: "mcp", Partitions: 2, Records: 200, Sessions: 4})
	Produce(t, c.Addrs(), recs)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	WaitGroupEmpty(t, ctx, c.Addrs(), "never-joined")

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: c.Addrs(), GroupID: "g", Topic: "mcp",
		SessionTimeout: 6 * time.Second, HeartbeatInterval: time.Second, RebalanceTimeout: 5 * time.Second,
		MaxWait: 100 * time.Millisecond, StartOffset: kafka.FirstOffset,
	})
	if _, err := r.FetchMessage(ctx); err != nil { // joined and assigned
		t.Fatal(err)
	}
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wctx, wcancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer wcancel()
		WaitGroupEmpty(ft, wctx, c.Addrs(), "g")
	}()
	<-done
	if !strings.Contains(ft.msg, "before it was empty") || !strings.Contains(ft.msg, "members ") {
		t.Errorf("WaitGroupEmpty with a member reading: %q", ft.msg)
	}
	if err := r.Close(); err != nil { // leaves the group
		t.Fatal(err)
	}
	WaitGroupEmpty(t, ctx, c.Addrs(), "g")
}
