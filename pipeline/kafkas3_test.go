package pipeline

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"mcptrace/dataset"
	"mcptrace/kafkasrc"
	"mcptrace/objstore"
)

// A member evicted while it still publishes (its partition taken over by
// a member on another machine) cannot replace the new owner's manifest in
// the bucket: its manifest write is fenced, and it stops.
func TestS3ManifestFencesAnEvictedOwner(t *testing.T) {
	be := s3mem.New()
	if err := be.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	t.Setenv("AWS_REGION", "us-east-1")
	ctx := context.Background()
	store, err := objstore.Open(ctx, "s3://bkt/d", objstore.ConfigFromEnv(objstore.Config{Endpoint: srv.URL, PathStyle: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	tp := kafkasrc.TopicPartition{Topic: "mcp", Partition: 0}
	member := func() (*s3Publisher, *kafkaScope) {
		dir := t.TempDir() // a machine of its own
		pub := &s3Publisher{store: store, dir: dir, empties: map[string]bool{}, versions: map[string]string{}}
		if err := pub.adopt(ctx, ScopeName(tp), stemPrefix(tp)); err != nil {
			t.Fatal(err)
		}
		ds, err := dataset.Open(ctx, dir, dataset.Options{Scope: ScopeName(tp)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ds.Close() })
		txn, err := ds.Begin("", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return pub, &kafkaScope{name: ScopeName(tp), tp: tp, ds: ds, txn: txn}
	}
	publish := func(pub *s3Publisher, sc *kafkaScope, end int64) error {
		files, err := sc.txn.Commit([]dataset.SourceState{{ID: KafkaInputID(tp), Append: true, Position: dataset.Position{Unit: "offset", End: end}}})
		if err != nil {
			t.Fatal(err)
		}
		return pub.publish(ctx, sc, files)
	}
	first, firstScope := member()
	if err := publish(first, firstScope, 10); err != nil {
		t.Fatalf("the first owner's publish: %v", err)
	}
	// The partition moves to a second member, which adopts the bucket's
	// state and publishes; the first, evicted but still running, publishes
	// once more.
	second, secondScope := member()
	if err := publish(second, secondScope, 20); err != nil {
		t.Fatalf("the new owner's publish: %v", err)
	}
	err = publish(first, firstScope, 15)
	if !errors.Is(err, objstore.ErrChanged) || !strings.Contains(err.Error(), "taken over") {
		t.Fatalf("the evicted owner's publish: %v, want it fenced", err)
	}
	data, _, err := store.GetVersion(ctx, scopeManifestRel(ScopeName(tp)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := dataset.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Sources[KafkaInputID(tp)].Position.End; got != 20 {
		t.Fatalf("the bucket's manifest holds position %d, want the new owner's 20", got)
	}
}
