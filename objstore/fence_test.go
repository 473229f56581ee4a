package objstore

import (
	"context"
	"errors"
	"testing"
)

// A manifest written with PutBytesIf changes only from the version its
// writer read: a writer that lost the object to another stops.
func TestPutBytesIfFencesAStaleWriter(t *testing.T) {
	f := newFake(t, "bkt")
	s := f.open("s3://bkt/p")
	ctx := context.Background()
	rel := ".mcptrace/scopes/kafka+mcp+0/manifest.json"

	v1, err := s.PutBytesIf(ctx, rel, []byte(`{"v":1}`), "")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := s.PutBytesIf(ctx, rel, []byte(`{"v":"other"}`), ""); !errors.Is(err, ErrChanged) {
		t.Fatalf("a second create of an existing object: %v, want ErrChanged", err)
	}
	// Two writers read version 1; the first to write wins, the other is fenced.
	data, got, err := s.GetVersion(ctx, rel)
	if err != nil || got != v1 || string(data) != `{"v":1}` {
		t.Fatalf("GetVersion: %q %q %v, want version %q", data, got, err, v1)
	}
	v2, err := s.PutBytesIf(ctx, rel, []byte(`{"v":2,"by":"new owner"}`), v1)
	if err != nil || v2 == v1 {
		t.Fatalf("update from the version read: %q %v", v2, err)
	}
	if _, err := s.PutBytesIf(ctx, rel, []byte(`{"v":2,"by":"old owner"}`), v1); !errors.Is(err, ErrChanged) {
		t.Fatalf("update from a stale version: %v, want ErrChanged", err)
	}
	data, _, err = s.GetVersion(ctx, rel)
	if err != nil || string(data) != `{"v":2,"by":"new owner"}` {
		t.Fatalf("the object is %q (%v): the stale writer replaced it", data, err)
	}
	if _, _, err := s.GetVersion(ctx, "missing.json"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetVersion of a missing object: %v", err)
	}
}
