// Package pipeline runs mcptrace's one-way flow, source → decode → correlate →
// classify → redact → sink, over files and standard input.
//
// The source expands inputs (files, directories walked in name order, glob
// patterns, "-" for standard input), undoes gzip, zlib or zstd compression
// found by magic bytes, and detects each input's format from its first
// bytes (package decode). Wire logs are cut into chunks of whole lines that
// the workers decode in parallel; every other format is one job per file,
// decoded by its format's decoder, whose output streams back in parts.
// Decoding fans out over every core; a sequencer puts the output back in
// input order and routes each observation, by a hash of its conversation
// key, to one of several correlator shards, so a conversation is always
// handled by one goroutine and in the order its log wrote it. Shards
// classify and redact the exchanges they finish; the sinks write Parquet.
//
// Every input record (a line, a HAR entry, a span, or a whole file that
// matches no format) is accounted for: it becomes an observation, a
// quarantine row (with a reason, its source and position, and a masked
// excerpt), or a skip counted by why, and the summary checks that these add
// up to the records read.
//
// Output files are written as hidden temporary files (".name.tmp"), closed,
// fsynced and renamed into OUT/<table>/dt=YYYY-MM-DD/<name>.parquet, where
// the name is derived from the input paths, so running the same input again
// replaces the same files instead of adding duplicates.
package pipeline
