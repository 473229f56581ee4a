package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"mcptrace/dataset"
	"mcptrace/objstore"
)

// The object-store backend of the Kafka sink. Each consumer keeps a local
// working copy of its scopes (Config.OutDir, a cache directory); after each
// local commit of a scope it uploads the scope's new files, then the
// scope's manifest, under the same relative keys, and only then are the
// partition's offsets committed. The manifest in the bucket is the truth:
// the next owner of a scope starts from it, deletes the objects of the
// scope that it does not list (the uploads of a publish that crashed
// before its manifest) and the local files it does not list.

// scopeManifestRel is a scope's manifest, relative to the dataset.
func scopeManifestRel(scope string) string { return ".mcptrace/scopes/" + scope + "/manifest.json" }

// s3Publisher publishes scopes to a store.
type s3Publisher struct {
	store   *objstore.Store
	dir     string          // the local working dataset
	empties map[string]bool // empty files uploaded, by key
	// versions: each scope's manifest version in the bucket (its ETag,
	// "" when there is none yet), as adopted or last written. A manifest
	// is written only over that version, so a member that lost its
	// partition (evicted while it still published) cannot undo the new
	// owner's manifest.
	versions map[string]string
	log      zerolog.Logger
}

// syncLedger makes the bucket's copy of a scope's ledger (ledger.json
// next to its manifest) the manifest's own: after a commit, and when a
// scope is adopted (a crash may have come between a manifest's upload and
// its copy's). The manifest is the ledger's truth: a copy that could not be
// written is only late, never ahead, and the next commit rewrites it.
func (p *s3Publisher) syncLedger(ctx context.Context, scope string, raw []byte, have []byte) {
	if len(raw) == 0 {
		return
	}
	want, err := dataset.LedgerBytes(raw)
	if err == nil && bytes.Equal(have, want) {
		return
	}
	if err == nil {
		err = p.store.PutBytes(ctx, dataset.LedgerFileRel(scope), want)
	}
	if err != nil {
		p.log.Warn().Err(err).Str("scope", scope).Msg("kafka: the copy of the partition's ledger in the bucket is not up to date (its manifest holds the ledger); retried at the next commit")
	}
}

// adopt makes the local working copy of a scope the one in the bucket,
// before the scope is opened: the bucket's manifest replaces the local
// one, and objects and local files of the scope it does not list go.
func (p *s3Publisher) adopt(ctx context.Context, scope string, stemPrefix string) error {
	rel := scopeManifestRel(scope)
	local := filepath.Join(p.dir, filepath.FromSlash(rel))
	data, version, err := p.store.GetVersion(ctx, rel)
	p.versions[scope] = version
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		if err := os.Remove(local); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// A ledger copy of the local working copy's own, never published.
		if err := os.Remove(filepath.Join(p.dir, filepath.FromSlash(dataset.LedgerFileRel(scope)))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	case err != nil:
		return err
	default:
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			return err
		}
		if err := writeFileAtomic(local, data); err != nil {
			return err
		}
	}
	listed := map[string]bool{}
	if data != nil {
		m, err := dataset.ParseManifest(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p.store.URL(rel), err)
		}
		if len(m.Ledger) > 0 {
			have, _ := p.store.Get(ctx, dataset.LedgerFileRel(scope))
			p.syncLedger(ctx, scope, m.Ledger, have)
		}
		for _, t := range m.TableNames() {
			for _, f := range m.Files(t) {
				listed[f.Path] = true
			}
			if e := m.EmptyFile(t); e != "" {
				listed[e] = true
				p.empties[e] = true
			}
		}
	}
	ours := func(key string) bool {
		base := path.Base(key)
		return strings.HasPrefix(base, stemPrefix) || base == "empty-"+scope+".parquet"
	}
	for _, table := range []string{"exchanges", "quarantine"} {
		keys, err := p.store.List(ctx, table+"/")
		if err != nil {
			return err
		}
		var orphans []string
		for _, k := range keys {
			if ours(k) && !listed[k] {
				orphans = append(orphans, k)
			}
		}
		if err := p.store.Delete(ctx, orphans...); err != nil {
			return err
		}
		// Local files of the scope: uploaded ones are removed after their
		// upload, so what is here was never published (a local commit whose
		// upload failed) and the bucket's manifest does not list it.
		root := filepath.Join(p.dir, table)
		filepath.WalkDir(root, func(fp string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(p.dir, fp)
			rel = filepath.ToSlash(rel)
			if ours(rel) && !listed[rel] {
				os.Remove(fp)
			}
			return nil
		})
	}
	return nil
}

// publish uploads what a local commit of a scope published, then the
// scope's manifest; the local copies of data files are removed once
// uploaded.
func (p *s3Publisher) publish(ctx context.Context, sc *kafkaScope, files []dataset.FileInfo) error {
	for _, f := range files {
		if err := p.store.Put(ctx, f.Path, sc.ds.Path(f.Path)); err != nil {
			return err
		}
	}
	m := sc.ds.Manifest()
	var gone []string
	for _, t := range m.TableNames() {
		e := m.EmptyFile(t)
		if e != "" && !p.empties[e] {
			if err := p.store.Put(ctx, e, sc.ds.Path(e)); err != nil {
				return err
			}
			p.empties[e] = true
		}
	}
	// An empty file the scope no longer has (its table got data).
	for key := range p.empties {
		if !strings.HasSuffix(key, "/empty-"+sc.name+".parquet") {
			continue
		}
		still := false
		for _, t := range m.TableNames() {
			if m.EmptyFile(t) == key {
				still = true
			}
		}
		if !still {
			gone = append(gone, key)
		}
	}
	data, err := os.ReadFile(filepath.Join(sc.ds.Dir(), filepath.FromSlash(scopeManifestRel(sc.name))))
	if err != nil {
		return err
	}
	version, err := p.store.PutBytesIf(ctx, scopeManifestRel(sc.name), data, p.versions[sc.name])
	if err != nil {
		if errors.Is(err, objstore.ErrChanged) {
			return fmt.Errorf("partition %s has been taken over by another consumer since this one adopted it: %w", sc.tp, err)
		}
		return err
	}
	p.versions[sc.name] = version
	p.syncLedger(ctx, sc.name, m.Ledger, nil)
	if err := p.store.Delete(ctx, gone...); err != nil {
		return err
	}
	for _, k := range gone {
		delete(p.empties, k)
	}
	for _, f := range files {
		os.Remove(sc.ds.Path(f.Path)) // uploaded: the bucket holds it now
	}
	return nil
}

func writeFileAtomic(name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, name)
}
