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
// input order and routes each observation, by a hash of its log (side,
// format, source), to one of several correlator shards, so every
// conversation of a log is handled by one goroutine, in the order the log
// wrote it, and a client's successive sessions can be related. Shards
// classify and redact the exchanges they finish; the sinks write Parquet.
// When the run holds both client and server logs, rows are kept until the
// end, merged (correlate.MergeViews), then redacted and written.
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
