package main

import (
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mcptrace/internal/kafkatest"
)

// Exit 4: a Kafka consumer that caught up with its rows durable in the
// dataset but whose offset commits the broker refused (every OffsetCommit
// answered OFFSET_METADATA_TOO_LARGE, which is not retried) says so, and
// the summary counts the failed commits; with the broker accepting them,
// the same records end with 0.
func TestKafkaUncommittedExits4(t *testing.T) {
	for _, refuse := range []bool{true, false} {
		c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: 1}})
		kafkatest.Produce(t, c.Addrs(), kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: 1, Records: 40, Sessions: 2}))
		var refused atomic.Int64
		if refuse {
			kf := c.Kfake()
			kf.ControlKey(int16(kmsg.OffsetCommit), func(r kmsg.Request) (kmsg.Response, error, bool) {
				kf.KeepControl()
				req := r.(*kmsg.OffsetCommitRequest)
				resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
				resp.Version = req.Version
				for _, rt := range req.Topics {
					st := kmsg.NewOffsetCommitResponseTopic()
					st.Topic = rt.Topic
					for _, rp := range rt.Partitions {
						sp := kmsg.NewOffsetCommitResponseTopicPartition()
						sp.Partition, sp.ErrorCode = rp.Partition, kerr.OffsetMetadataTooLarge.Code
						st.Partitions = append(st.Partitions, sp)
					}
					resp.Topics = append(resp.Topics, st)
				}
				refused.Add(1)
				return resp, nil, true
			})
		}
		out := filepath.Join(t.TempDir(), "out")
		p, code := runIngestProc(t, kafkaArgs(c, "uncommitted", out, "-kafka-until-caught-up")...)
		want := ExitOK
		if refuse {
			want = ExitUncommitted
		}
		if code != want {
			t.Fatalf("commits refused %v: exit %d, want %d (%d commits refused)\n%s", refuse, code, want, refused.Load(), p)
		}
		if refuse && refused.Load() == 0 {
			t.Fatal("no commit was refused: the test proves nothing")
		}
		if x, _ := checkDataset(t, out); x == 0 {
			t.Errorf("commits refused %v: no rows in the dataset", refuse)
		}
	}
}
