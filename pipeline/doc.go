// Package pipeline runs mcptrace's one-way flow, source → decode → correlate →
// classify → redact → sink, over files.
//
// The file source expands paths (files, directories walked in name order,
// gzip detected by its magic bytes) and cuts each file into chunks of whole
// lines. Decoding fans out over every core; a sequencer puts decoded chunks
// back in input order and routes each observation, by a hash of its
// conversation key, to one of several correlator shards, so a conversation
// is always handled by one goroutine and in the order its log wrote it.
// Shards classify and redact the exchanges they finish; the sinks write
// Parquet.
//
// Every input line is accounted for: it is blank, quarantined (with a reason,
// its source and line, and a masked excerpt) or an observation, and the
// summary checks that these add up to the lines read.
//
// Output files are written as hidden temporary files (".name.tmp"), closed,
// fsynced and renamed into OUT/<table>/dt=YYYY-MM-DD/<name>.parquet, where
// the name is derived from the input paths, so running the same input again
// replaces the same files instead of adding duplicates.
package pipeline
