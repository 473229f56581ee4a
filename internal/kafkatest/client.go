package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Offsets are offsets by topic and partition.
type Offsets = map[string]map[int32]int64

// requestTimeout bounds each helper's round trips to the cluster.
const requestTimeout = time.Minute

func newClient(addrs []string, opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...)}, opts...)...)
}

// Produce writes recs to their topics and exact partitions (Record.Partition),
// in the order given within each partition, and waits until every one is
// acknowledged by the cluster. It returns each record's offset, in the
// order of recs, and fails the test on the first error, naming the record.
// Records go uncompressed, in batches of up to 1 MB.
func Produce(t testing.TB, addrs []string, recs []Record) []int64 {
	t.Helper()
	offs, err := produce(addrs, recs)
	if err != nil {
		t.Fatalf("kafkatest.Produce: %v", err)
	}
	return offs
}

func produce(addrs []string, recs []Record) ([]int64, error) {
	cl, err := newClient(addrs,
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(0),
		kgo.MaxBufferedRecords(50000),
		kgo.RecordDeliveryTimeout(requestTimeout),
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout+10*time.Second)
	defer cancel()
	krs := make([]kgo.Record, len(recs))
	ptrs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = kgo.Record{Topic: r.Topic, Partition: r.Partition, Key: r.Key, Value: r.Value}
		ptrs[i] = &krs[i]
	}
	var first error
	for i, res := range cl.ProduceSync(ctx, ptrs...) {
		if res.Err != nil && first == nil {
			first = fmt.Errorf("record %d (topic %s partition %d key %q): %w", i, recs[i].Topic, recs[i].Partition, recs[i].Key, res.Err)
		}
	}
	if first != nil {
		return nil, first
	}
	offs := make([]int64, len(recs))
	for i := range krs {
		offs[i] = krs[i].Offset
	}
	return offs, nil
}

// Committed returns the offsets group has committed for topics (all topics
// when none are named): the next offset the group will read, per
// partition. Partitions without a committed offset are absent, and a group
// that does not exist has none. It fails the test on error.
func Committed(t testing.TB, addrs []string, group string, topics ...string) Offsets {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	got, err := committed(ctx, addrs, group, topics)
	if err != nil {
		t.Fatalf("kafkatest.Committed: group %q: %v", group, err)
	}
	return got
}

func committed(ctx context.Context, addrs []string, group string, topics []string) (Offsets, error) {
	cl, err := newClient(addrs)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group // Topics nil: every topic the group has committed
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if errors.Is(err, kerr.GroupIDNotFound) {
			return Offsets{}, nil // kfake's answer for a group that never committed; Kafka's is empty
		}
		return nil, err
	}
	want := func(string) bool { return true }
	if len(topics) > 0 {
		want = func(t string) bool { return slices.Contains(topics, t) }
	}
	out := Offsets{}
	for _, rt := range resp.Topics {
		if !want(rt.Topic) {
			continue
		}
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return nil, fmt.Errorf("topic %s partition %d: %w", rt.Topic, rp.Partition, err)
			}
			if rp.Offset < 0 {
				continue
			}
			if out[rt.Topic] == nil {
				out[rt.Topic] = map[int32]int64{}
			}
			out[rt.Topic][rp.Partition] = rp.Offset
		}
	}
	return out, nil
}

// End returns the end offset (high watermark: the offset the next record
// will get) of every partition of topics, which must exist. It fails the
// test on error.
func End(t testing.TB, addrs []string, topics ...string) Offsets {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	got, err := end(ctx, addrs, topics)
	if err != nil {
		t.Fatalf("kafkatest.End: topics %v: %v", topics, err)
	}
	return got
}

func end(ctx context.Context, addrs []string, topics []string) (Offsets, error) {
	if len(topics) == 0 {
		return nil, errors.New("name at least one topic")
	}
	cl, err := newClient(addrs)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	meta := kmsg.NewPtrMetadataRequest()
	for _, name := range topics {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		meta.Topics = append(meta.Topics, mt)
	}
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	for _, mt := range mresp.Topics {
		name := ""
		if mt.Topic != nil {
			name = *mt.Topic
		}
		if err := kerr.ErrorForCode(mt.ErrorCode); err != nil {
			return nil, fmt.Errorf("topic %s: %w", name, err)
		}
		lt := kmsg.NewListOffsetsRequestTopic()
		lt.Topic = name
		for _, mp := range mt.Partitions {
			lp := kmsg.NewListOffsetsRequestTopicPartition()
			lp.Partition = mp.Partition
			lp.Timestamp = -1 // latest
			lt.Partitions = append(lt.Partitions, lp)
		}
		lo.Topics = append(lo.Topics, lt)
	}
	lresp, err := lo.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := Offsets{}
	for _, rt := range lresp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return nil, fmt.Errorf("topic %s partition %d: %w", rt.Topic, rp.Partition, err)
			}
			if out[rt.Topic] == nil {
				out[rt.Topic] = map[int32]int64{}
			}
			out[rt.Topic][rp.Partition] = rp.Offset
		}
	}
	for _, name := range topics {
		if len(out[name]) == 0 {
			return nil, fmt.Errorf("topic %s: no partitions in the answer", name)
		}
	}
	return out, nil
}

// WaitCommitted polls, every 50 ms, until group has committed at least the
// offsets of want for every partition in want (End's answer, say), and
// returns what is committed then (compare it with want for equality: a
// commit past the end is a bug WaitCommitted does not hide). It fails the
// test when ctx ends first, showing what was committed and the last error.
func WaitCommitted(t testing.TB, ctx context.Context, addrs []string, group string, want Offsets) Offsets {
	t.Helper()
	topics := slices.Sorted(maps.Keys(want))
	var (
		got     Offsets
		lastErr error
	)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		g, err := committed(rctx, addrs, group, topics)
		cancel()
		if err != nil {
			lastErr = err
		} else {
			got = g
			if Reached(got, want) {
				return got
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("kafkatest.WaitCommitted: group %q: %v before the commits reached\n  want %s\n  have %s\n  last error: %v",
				group, ctx.Err(), Format(want), Format(got), lastErr)
			return got
		case <-tick.C:
		}
	}
}

// Reached reports whether got has, for every partition in want, an offset
// at least want's.
func Reached(got, want Offsets) bool {
	for topic, ps := range want {
		for p, w := range ps {
			g, ok := got[topic][p]
			if !ok || g < w {
				return false
			}
		}
	}
	return true
}

// Format writes offsets in a stable order, for failure messages:
// "t/0=12 t/1=40".
func Format(o Offsets) string {
	var parts []string
	for _, topic := range slices.Sorted(maps.Keys(o)) {
		ps := slices.Sorted(maps.Keys(o[topic]))
		for _, p := range ps {
			parts = append(parts, fmt.Sprintf("%s/%d=%d", topic, p, o[topic][p]))
		}
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, " ")
}

// WaitGroupEmpty polls, every 100 ms, until group has no members (its
// state Empty or Dead, or unknown to the cluster), and fails the test when
// ctx ends first, naming the members still in it.
//
// A test that kills consumers needs it before it starts the one that must
// own every partition. The in-process broker has a gap a real broker does
// not: a member killed while its JoinGroup waits for a rebalance is made a
// member when the rebalance completes, its reply cannot be delivered, and
// so no session timer starts for it; once a live leader syncs, the
// pending-sync timer is cleared and the dead member keeps its partitions
// until some later rebalance. A real broker starts every member's session
// timer when the join completes. With no live member, the broker's
// pending-sync timeout (the rebalance timeout) removes such members, so
// waiting here until the group is empty costs at most a few timeouts.
func WaitGroupEmpty(t testing.TB, ctx context.Context, addrs []string, group string) {
	t.Helper()
	cl, err := newClient(addrs)
	if err != nil {
		t.Fatalf("kafkatest.WaitGroupEmpty: %v", err)
	}
	defer cl.Close()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = []string{group}
		// A short bound per request: a request the broker does not answer
		// is asked again.
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		resp, err := req.RequestWith(rctx, cl)
		cancel()
		switch {
		case err != nil:
			if last == "" || ctx.Err() == nil {
				last = err.Error()
			}
		case len(resp.Groups) != 1:
			last = fmt.Sprintf("%d groups in the answer", len(resp.Groups))
		default:
			g := resp.Groups[0]
			if err := kerr.ErrorForCode(g.ErrorCode); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
				last = err.Error()
				break
			}
			if len(g.Members) == 0 || g.State == "Empty" || g.State == "Dead" {
				return
			}
			ids := make([]string, len(g.Members))
			for i, m := range g.Members {
				ids[i] = m.MemberID + "@" + m.ClientHost
			}
			last = fmt.Sprintf("state %s, members %s", g.State, strings.Join(ids, ", "))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("kafkatest.WaitGroupEmpty: group %q: %v before it was empty: %s", group, ctx.Err(), last)
			return
		case <-tick.C:
		}
	}
}
