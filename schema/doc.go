// Package schema holds the record types every mcptrace stage shares: the
// mcptrace wire log (version 1, our own NDJSON capture format), the evidence
// model that decoders produce (observations and the JSON-RPC messages found in
// them), and the rows written to Parquet (exchanges and quarantine).
//
// Nothing in this package does I/O; it is types, constants and small pure
// helpers over them.
package schema
