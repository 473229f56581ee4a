package kafkatest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FileName is the name WriteFiles gives a topic partition's file.
func FileName(topic string, partition int32) string {
	return fmt.Sprintf("%s-%d.ndjson", topic, partition)
}

// PartitionKey is how WriteFiles' map names a topic partition: "TOPIC/P".
func PartitionKey(topic string, partition int32) string {
	return fmt.Sprintf("%s/%d", topic, partition)
}

// WriteFiles writes recs to dir as wire-log files, one a topic partition
// (FileName: "TOPIC-P.ndjson"), each record's value one line, in the order
// of recs (the order Produce gives them offsets in), and returns
// PartitionKey → path. A file's line N is then the record at offset N-1 of
// its partition, when the partition was empty before Produce. It fails the
// test if a value holds a newline (it would be two lines in a file but one
// message in Kafka) or a file cannot be written.
func WriteFiles(t testing.TB, dir string, recs []Record) map[string]string {
	t.Helper()
	type out struct {
		f *os.File
		w *bufio.Writer
	}
	outs := map[string]*out{}
	var order []string
	defer func() {
		for _, o := range outs {
			o.f.Close() // after a failure; a second Close of a closed file is harmless
		}
	}()
	for i, r := range recs {
		if bytes.IndexByte(r.Value, '\n') >= 0 {
			t.Fatalf("kafkatest.WriteFiles: record %d (topic %s partition %d) holds a newline: it would be more than one line", i, r.Topic, r.Partition)
		}
		k := PartitionKey(r.Topic, r.Partition)
		o := outs[k]
		if o == nil {
			f, err := os.Create(filepath.Join(dir, FileName(r.Topic, r.Partition)))
			if err != nil {
				t.Fatalf("kafkatest.WriteFiles: %v", err)
			}
			o = &out{f, bufio.NewWriterSize(f, 1<<20)}
			outs[k] = o
			order = append(order, k)
		}
		o.w.Write(r.Value) // errors stick in the bufio.Writer; Flush reports them
		o.w.WriteByte('\n')
	}
	paths := make(map[string]string, len(outs))
	for _, k := range order {
		o := outs[k]
		if err := o.w.Flush(); err != nil {
			t.Fatalf("kafkatest.WriteFiles: writing %s: %v", o.f.Name(), err)
		}
		if err := o.f.Close(); err != nil {
			t.Fatalf("kafkatest.WriteFiles: closing %s: %v", o.f.Name(), err)
		}
		paths[k] = o.f.Name()
	}
	return paths
}
