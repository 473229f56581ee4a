// Package dataset owns mcptrace's on-disk dataset: where files go, the
// manifest that records which source wrote which file, the lock that keeps
// one writer at a time (or one per scope, see Scopes), and the commit that
// makes a run's output appear whole or not at all.
//
// # Layout
//
//	DIR/
//	  exchanges/dt=2026-10-17/file-3f2a9c1b7d4e-00001.parquet   data files (Hive partitions)
//	  quarantine/dt=1970-01-01/empty.parquet                    zero-row file of an empty table
//	  .mcptrace/
//	    lock            flock'ed by the writer; records its pid, host, start
//	    manifest.json   the dataset's record (below)
//	    staging/<run>/  files of the open run, invisible to readers
//	    scopes/<S>/     lock, manifest.json, staging/ of scope S (see Scopes)
//
// Tables are directories of Hive partitions dt=YYYY-MM-DD (the UTC date the
// table's dayOf gives a row). The hidden .mcptrace directory is skipped by
// Spark and Hive (names starting with '.' or '_'), and no table glob such
// as read_parquet('DIR/exchanges/**/*.parquet') reaches it.
//
// File names are deterministic: a stem, then a sequence number per (table,
// partition, source, stem) in the run, "<stem>-00001.parquet". The stem is
// the Source's (Kafka passes "<topic>+<partition>+<first offset>", the
// offset of the file's first row: a file keeps the stem of the Write that
// opened it, and a new stem starts at 00001, so a replay that starts at
// another file names each file as before) or, by default, the scheme of
// the source identity and 12 hex digits of its SHA-256 (DefaultStem). Contents are deterministic too: parquet-go with the
// options pipeline/sink.go used (zstd, MaxRowsPerRowGroup, data page v1,
// 1 MiB dictionaries, a constant CreatedBy; column chunk statistics and
// the page index, no statistics in data page headers), no time or random value in
// names or bytes, and size checks at fixed row counts (every CheckEvery
// rows of a file), so the same rows in the same order give byte-identical
// files however the caller batches its writes, provided no roll depends on
// the clock (MaxAge, explicit Roll calls by a timer).
//
// # Writing: staging and rolling files
//
// A run is a transaction (Begin). Its tables (NewTable) write into
// .mcptrace/staging/<run>/<table>/dt=.../, so nothing under the tables'
// directories changes before a commit. One writer per (table, partition,
// source); a writer finishes its file (rolls) on RollPolicy.MaxRows
// (default 1,048,576), MaxBytes (default 128 MiB, parquet-go's estimate),
// MaxAge (default off), an explicit Roll (a flush marker) or Tick, and
// when opening one more writer than MaxOpen (default 8): the least
// recently used one is rolled. Memory is therefore bounded by MaxOpen
// writers, each holding at most one row group (RowGroupRows, default
// 65,536, or RowGroupBytes, default 8 MiB estimated), whatever the number
// of partitions: BenchmarkPartitions measured about 106 MiB of writer heap
// for 200,000 exchanges over 1,000 dates and 127 MiB over 10 dates, against
// 3.9 GiB with a writer per partition. The price of the bound is more,
// smaller files when the rows of many dates interleave.
//
// A file is rolled like this: written under a hidden name (".NAME.tmp"),
// the Parquet footer written (Close), fsync, close, rename to NAME. The
// staging directories are fsynced once, by the commit that publishes their
// files. Every error names the path and the cause ("writing DIR/.mcptrace/
// staging/run/exchanges/dt=.../.NAME.tmp: ...: no space left on device").
//
// Roll (and Tick) return every file staged since the previous call, and
// RollPolicy.OnDurable reports each at once: table, partition, final path,
// source and rows. A staged file is durable but not yet in the dataset: a
// crash discards staging, so input must be acknowledged (a Kafka offset
// committed) only for the files a Commit has returned.
//
// # Commit: what a rerun replaces
//
// Txn.Commit(sources) publishes the staged files of the sources it names
// (rolling their open files first) and records each SourceState (the
// position covered, opaque here, and whether it was read to its end).
//
//   - The first commit of a source in a transaction replaces every file the
//     source had in the dataset, in every table and partition, even when the
//     run wrote no row for it: a log that shrank or rotated leaves no stale
//     partition behind. Rerunning any set of inputs, in any order and under
//     any spelling, replaces exactly those sources' rows, as long as the
//     caller gives canonical identities (resolved paths, content
//     fingerprints for pipes).
//   - Later commits of the same source in the same transaction add files (a
//     live stream commits at each flush). SourceState.Append makes the first
//     commit add too (a stream resuming from its committed position).
//   - Sources not named are untouched; a new file may take the name of a
//     replaced file of its own source, never that of a file that stays (the
//     commit fails before its commit point).
//   - A source whose files are all gone stays in the manifest with its
//     position: the dataset remembers that it was read and produced nothing.
//   - SourceState.Keys replace the source's dedupe keys (SourceEntry.Keys,
//     stored sorted and without duplicates; nil clears them). They are
//     opaque here: the Kafka sink keeps there the exchange ids (and
//     quarantine keys) of rows already written for records past the
//     committed offset, so that a replay does not write them twice.
//
// # Empty tables
//
// After a commit, every table registered in the transaction that has no
// data file in the dataset gets a zero-row file with its full schema at
// TABLE/dt=1970-01-01/empty.parquet, removed by the commit that gives the
// table its first data file. It lives in a dt= directory so that both
// read_parquet('DIR/T/*/*.parquet') (the README's form) and
// 'DIR/T/**/*.parquet' find it, and with hive_partitioning = true the dt
// column is a DATE as on any other day (tested with DuckDB; a file at the
// table's root is missed by the */*.parquet form and has no dt column, and
// Hive's dt=__HIVE_DEFAULT_PARTITION__ turns dt into VARCHAR). It holds no
// row, so no query ever returns a 1970 row. Its name has no '_' or '.' in
// front, which Spark would skip. A table known to the manifest but not
// registered in the transaction is left as it is (its schema is not known
// to the run).
//
// # The manifest
//
// DIR/.mcptrace/manifest.json, version 1, written like a data file
// (temporary name, fsync, rename, directory fsync); keys are sorted, paths
// are relative to DIR with '/' separators so the dataset can be moved:
//
//	{
//	  "version": 1,
//	  "tables": {"exchanges": {}, "quarantine": {"empty": "quarantine/dt=1970-01-01/empty.parquet"}},
//	  "sources": {
//	    "file:/logs/client.ndjson": {
//	      "run_id": "run-20261017T100000Z-4242",
//	      "run_time": "2026-10-17T10:00:00Z",
//	      "position": {"unit": "byte", "start": 0, "end": 73421},
//	      "complete": true,
//	      "files": {"exchanges": [{"path": "exchanges/dt=2026-10-17/file-3f2a9c1b7d4e-00001.parquet",
//	                               "dt": "2026-10-17", "rows": 14, "bytes": 9120}]},
//	      "keys": ["..."]
//	    }
//	  },
//	  "pending": {"run_id": "...", "renames": [{"from": ".mcptrace/staging/...", "to": "exchanges/..."}],
//	              "deletes": ["exchanges/dt=2026-10-16/file-3f2a9c1b7d4e-00001.parquet"]}
//	}
//
// "pending" is present only while a commit is being applied, "keys" only
// when the last commit of the source gave some. Files not in the manifest
// (written by an older mcptrace, or by hand) are never touched.
//
// "ledger", when present, is the writer's accounting as of the last
// commit that gave one (Txn.SetLedger; opaque JSON here, a schema.Ledger
// for the Kafka sink's scopes): being in the manifest, it is published at
// the commit point with the files it accounts for, or not at all. It is
// copied to ledger.json next to the manifest after the commit, and Open
// rewrites that copy when it differs (a crash came between). A file run
// writes its ledger.json itself (Dataset.WriteLedger), with no manifest
// field.
// ReadManifest reads it without the lock (for analyze), with the manifests
// of all scopes if there are any (see Scopes); Manifest.Files(table), Rows,
// EmptyFile, SourceIDs and TableNames answer the usual questions.
//
// # Commit protocol and recovery
//
//  1. Roll the named sources' open files; compute the new manifest and the
//     operations that make the directory match it: renames staged → final,
//     deletes of replaced files, the empty tables' zero-row files.
//  2. fsync the staging directories that hold the files to publish.
//  3. Write the new manifest with "pending" set: temporary file, fsync,
//     rename over manifest.json, fsync of .mcptrace. This rename is the
//     commit point. A failure before it (a full disk, say) leaves the
//     dataset and the old manifest as they were, returns an error naming
//     the path and the cause, and keeps the staged files for a retry or
//     Abort.
//  4. Apply the operations, each idempotently (a rename whose source is gone
//     and whose target exists is done; a missing file to delete is gone),
//     remove partition directories left empty, fsync every directory
//     touched.
//  5. Rewrite the manifest without "pending".
//
// A crash or failure after the commit point leaves a manifest whose
// pending list the next Open rolls forward, so once a writer has opened
// the dataset it holds either the old state or the new one, never a mix. (A reader that
// globs the directory during step 4 can see part of it.) Txn.Abort removes
// the staging area, so a run that never committed leaves the dataset
// byte-for-byte as it was; after a failure past the commit point, Abort
// keeps the staging files the pending list needs.
//
// Open recovers, in this order: the pending list is rolled forward; the
// staging areas of crashed runs are removed (the lock guarantees no other
// run is alive); stale ".*.tmp" files in DIR/*/dt=*/ and empty dt=
// directories are removed. Only dt= directories of top-level, non-hidden
// directories are looked at. (That is an unscoped Open; a scoped one
// recovers only its scope: see Scopes.)
//
// # The lock
//
// Open takes an exclusive, non-blocking flock on DIR/.mcptrace/lock and
// writes the holder's pid, host and start time into it. A second writer
// fails at once with a *LockedError (errors.Is(err, ErrLocked)): "dataset
// DIR is being written by mcptrace pid N on host H since T: wait for it to
// finish, or pass -wait-lock to wait". With Options.WaitLock, Open polls
// the lock every 100 ms until it is free or its context ends. The kernel
// releases an flock when its process dies, SIGKILL included, so a crash
// never leaves the dataset locked; the lock file itself is never removed.
// flock is advisory and, on NFS, depends on the server's lock support.
// Scoped writers take this lock shared (see Scopes).
//
// # Scopes
//
// A scope (Options.Scope) lets several processes write one dataset
// directory at the same time: the members of a Kafka consumer group, each
// owning some partitions. The natural scope is the partition
// ("<topic>+<partition>"): its source then stays in one scope, with its
// files, position and keys, whichever member owns it after a rebalance. A
// scope's name has at most 150 letters, digits, '.', '_', '-' and '+'
// (ValidScope).
//
//	DIR/.mcptrace/scopes/S/
//	  lock            flock'ed by the scope's writer; records its pid, host, start
//	  manifest.json   the scope's manifest, in the format above
//	  staging/<run>/  files of the scope's open run
//
// Locks. A scoped Open takes a shared flock on DIR/.mcptrace/lock, then an
// exclusive one on the scope's lock: scopes write side by side, two
// writers of one scope exclude each other ("scope S of dataset DIR is
// being written by mcptrace pid N ..."), an unscoped run, which takes the
// dataset's lock exclusively, excludes every scoped writer and is excluded
// by any ("dataset DIR is being written by Kafka consumers (scoped
// writers): scope S by mcptrace pid N ..."). WaitLock waits for both locks;
// both are released by Close and by the kernel when the process dies. An
// unscoped writer waiting with WaitLock gets the dataset only once no
// scope is open.
//
// Commits. A scope's transactions stage under its staging area and commit
// into its own manifest, with the protocol above; the next Open of the
// scope rolls its pending commit forward and removes its staging area.
// What a commit replaces, Append and Keys apply within the scope: a
// source's identity should belong to one scope (ReadManifest merges the
// files of one identity found in several, and takes the rest from its
// latest run). The union of the dataset's manifest and every scope's is
// what ReadManifest returns; Dataset.Manifest is the scope's own.
// An unscoped Open does not roll a scope's pending commit forward: the
// scope's next Open does.
//
// File names. Files of all scopes share the tables' directories, so the
// stems the caller passes must name the scope (Kafka:
// "<topic>+<partition>+<first offset>"). A scope's commit refuses a new
// file whose name exists and is not one of its own (another scope's, the
// unscoped writer's, or a file of no manifest), and an unscoped commit one
// that a scope's manifest lists, before their commit point; two scopes
// publishing one new name at the same instant are not caught.
//
// What is swept. A scoped Open removes only what it can prove is its own:
// its staging area and its manifest's temporary file. It does not remove
// ".*.tmp" files or empty dt= directories of the tables (other scopes are
// writing there); the next unscoped Open does. A scope's commit removes the
// dt= directories it leaves empty, as an unscoped one does; rmdir removes
// only an empty directory, and a commit whose rename finds its directory
// removed by another scope in the moment since it made it makes it again
// and retries, so the race is harmless.
//
// Empty tables. Per scope: a table registered in the scope's run with no
// data file in the scope's manifest gets TABLE/dt=1970-01-01/empty-S.parquet
// (zero rows, the full schema), removed by the scope's commit that gives it
// one. Several such files, beside data files of other scopes, read with
// read_parquet('DIR/T/*/*.parquet', hive_partitioning = true) as one table
// (tested with DuckDB). In the union, EmptyFile names one of them when no
// manifest has a data file of the table.
//
// # Durability
//
// When Commit returns without error, the published files and the manifest
// that lists them are on disk (file and directory fsyncs), and survive a
// power loss. Before that, nothing of the run is in the dataset.
package dataset
