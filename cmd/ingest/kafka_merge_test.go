package main

import (
	"testing"

	"mcptrace/internal/kafkatest"
)

// Synth's co-partitioned client and server views spread over
// two days (one exchange every ~32 s of event time) instead of ~5 s.
func TestKafkaCoPartitionedMergeSpreadTraffic(t *testing.T) {
	const serverTopic = kafkaTopic + "-server"
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: 3, serverTopic: 3}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: 3, Records: 6000, Sessions: 60, Server: true, ServerTopic: serverTopic, Days: 2})
	kafkatest.Produce(t, c.Addrs(), recs)
	base := fileBaseline(t, recs)
	out := t.TempDir()
	// -max-hold 0: files have no such bound; with one, sessions two days
	// long are cut every 15 minutes and a retry may land across a cut.
	if p, code := runIngestProc(t, kafkaArgs(c, "merge", out, "-kafka-topic", serverTopic, "-kafka-until-caught-up", "-max-hold", "0")...); code != 0 {
		t.Fatalf("kafka consumer exited %d\n%s", code, p)
	}
	checkCommittedAtEndOf(t, c, "merge", out, kafkaTopic, serverTopic)
	sameExchanges(t, out, base)
}

// The bundled client/server sample pairs on two co-partitioned
// topics (pair i on partition i of both), -merge auto on both paths.
func TestKafkaSamplesMergedSameAsFiles(t *testing.T) {
	files, _ := recordSamples(t)
	byName := map[string]sampleFile{}
	for _, f := range files {
		byName[f.name] = f
	}
	const serverTopic = kafkaTopic + "-server"
	pairs := [][2]string{{"seed/client.ndjson", "seed/server.ndjson"}, {"cakewalk/client.ndjson", "cakewalk/server.ndjson"}, {"correlation/client.ndjson", "correlation/server.ndjson"}}
	var recs []kafkatest.Record
	var paths []string
	for i, p := range pairs {
		for j, topic := range []string{kafkaTopic, serverTopic} {
			f := byName[p[j]]
			paths = append(paths, f.path)
			for _, r := range sampleRecords(topic, []sampleFile{f}) {
				r.Partition = int32(i)
				recs = append(recs, r)
			}
		}
	}
	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{kafkaTopic: len(pairs), serverTopic: len(pairs)}})
	kafkatest.Produce(t, c.Addrs(), recs)
	kout := t.TempDir()
	// -max-hold 0: files have no such bound, and cakewalk's logs span an
	// hour (a sessionless conversation there is cut at 15 minutes).
	if p, code := runIngestProc(t, kafkaArgs(c, "merged", kout, "-kafka-topic", serverTopic, "-kafka-until-caught-up", "-max-hold", "0")...); code != 0 {
		t.Fatalf("kafka consumer exited %d\n%s", code, p)
	}
	fout := t.TempDir()
	if p, code := runIngestProc(t, append([]string{"-out", fout, "-workers", "2"}, paths...)...); code != 0 {
		t.Fatalf("file ingest exited %d\n%s", code, p)
	}
	checkCommittedAtEndOf(t, c, "merged", kout, kafkaTopic, serverTopic)
	sameExchanges(t, kout, fout)
}
