// Package kafkatest is the Kafka test harness of mcptrace's tests: it starts
// an in-process Kafka-protocol broker (franz-go's kfake) that tests and the
// `ingest` binary they run as a subprocess connect to over TCP, makes
// realistic keyed wire-log records from internal/synth, produces them to
// exact partitions, writes the same records as per-partition files for the
// file path of `ingest`, and reads back committed and end offsets. It is
// imported only from _test.go files.
//
// # Broker
//
// Start(t, Options{Topics: map[string]int{"mcp": 6}}) returns a Cluster
// listening on 127.0.0.1; Addrs gives the bootstrap list for
// -kafka-brokers. The cluster persists to a directory (Options.DataDir, a
// fresh t.TempDir by default), so Restart closes it and starts a new one on
// the same ports and directory: records and committed group offsets
// survive, and connected clients see their connections drop and the broker
// come back where it was. Stop and Resume do the same in two steps, for a
// test that wants the broker down for a while. The group minimum session
// timeout is 1 s (Options.MinSessionTimeout), so a consumer given a short
// session timeout and killed with SIGKILL is evicted in about that time.
//
// # Records
//
// Synth makes wire-log lines with internal/synth, one Record a line. The
// key is the line's conversation: the session id (session_id, else the
// Mcp-Session-Id request header, else the legacy sessionId query
// parameter), else the connection, as the correlator groups lines
// (correlate.ShardKey and schema/README.md "Conversations"), so every line
// of a conversation has one key. The partition is the one kafka-go's
// kafka.Hash balancer picks for that key over the topic's partitions (the
// balancer itself is called), which is what the README tells producers to
// do. With SynthOptions.Server a second topic gets the server's view of the
// same traffic, keyed and partitioned the same way (co-partitioned). Keyed
// does the same for any wire-log lines (samples, say). Poison and
// PoisonWire make messages no reader accepts.
//
// # Produce, files, offsets
//
// Produce writes records synchronously to their partitions with franz-go's
// kgo client and returns each record's offset. WriteFiles writes the same
// records as one NDJSON file per topic partition, in produce order, for the
// file path of `ingest`. Committed and End read a group's committed offsets
// and the partitions' end offsets with raw kmsg requests through kgo (kadm
// is not in go.mod); WaitCommitted polls until a group has committed at
// least the given offsets; Reached and Format compare and print Offsets.
//
// A typical acceptance test:
//
//	c := kafkatest.Start(t, kafkatest.Options{Topics: map[string]int{"mcp": 6}})
//	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: "mcp", Partitions: 6, Records: 100000})
//	kafkatest.Produce(t, c.Addrs(), recs)
//	files := kafkatest.WriteFiles(t, t.TempDir(), recs) // the same records for the file path
//	// run ingest -kafka-brokers strings.Join(c.Addrs(), ",") -kafka-topic mcp -kafka-group g ...
//	end := kafkatest.End(t, c.Addrs(), "mcp")
//	got := kafkatest.WaitCommitted(t, ctx, c.Addrs(), "g", end)
//
// Measured on a 2-core Linux machine: Synth of 100,000 records takes about
// 0.5 s and Produce of them (91 MB, to a persisted cluster) about 0.6 s
// (BenchmarkSynth100k, BenchmarkProduce100k).
package kafkatest
