// Package metrics is mcptrace's operations surface: the Prometheus metrics of
// a run and the HTTP server of -metrics-addr that exports them next to
// /healthz and /readyz.
//
// The pipeline updates the collectors from its goroutines through a
// *Metrics (New); every method is safe for concurrent use, and every method
// of a nil *Metrics, and of the nil handles it returns, does nothing, so a
// run without -metrics-addr passes nil and needs no checks. Hot paths resolve
// a handle once (Metrics.Partition per assigned Kafka partition, Metrics.Input
// per file or stdin input) and then pay only atomic operations per record.
// The metrics live in a registry of their own, with the Go runtime (go_*) and
// process (process_*) collectors; nothing is registered globally.
//
// # Metrics
//
// Counters (monotonic over the life of the process; a restart starts from 0,
// which Prometheus's rate() and increase() handle):
//
//   - mcptrace_records_in_total{source_kind,topic,partition}: input records
//     read. source_kind is "kafka", "file" or "stdin"; topic and partition
//     are the Kafka coordinates, empty for files and stdin (the file path is
//     not a label: it would grow without bound). A redelivered record counts
//     again here and in mcptrace_duplicates_dropped_total.
//   - mcptrace_bytes_in_total{source_kind,topic,partition}: bytes of those
//     records (the message value for Kafka, the line or document for files).
//   - mcptrace_exchanges_out_total{outcome}: exchange rows written, by
//     verdict (SUCCESS, TOOL_ERROR, JSONRPC_ERROR, HTTP_ERROR, ...: the
//     outcome column of the exchanges table).
//   - mcptrace_quarantined_total{reason}: records quarantined, by reason (the
//     reason column of the quarantine table).
//   - mcptrace_duplicates_dropped_total{why}: duplicates dropped. why is
//     "redelivered" (a Kafka record below its partition's committed offset,
//     met again after a rebalance) or "already_written" (a row whose
//     exchange_id the dataset already holds, met again on a replay after a
//     crash). Both series exist from the start at 0.
//   - mcptrace_commits_total{kind} and mcptrace_commit_errors_total{kind}:
//     successful and failed commits. kind is "dataset" (files published in
//     the dataset), "kafka" (offsets committed to the consumer group) or
//     "upload" (objects stored in object storage). All six series exist from
//     the start at 0; alert on increase(mcptrace_commit_errors_total[10m]) > 0.
//   - mcptrace_rebalances_total: generations of the consumer group this
//     member joined.
//
// Gauges:
//
//   - mcptrace_open_conversations: conversations the correlator holds open.
//     Each one holds its partition's commit point back (at most -max-hold).
//   - mcptrace_records_uncommitted: records read whose offsets (for files:
//     ledger positions) are not yet committed; bounded by the in-flight limit,
//     and growing without bound means commits are stuck.
//   - mcptrace_partition_lag{topic,partition}: records behind the high
//     watermark on a partition this member owns: high watermark - offset - 1
//     of the last message read, 0 when caught up. Consumer-side, so it is
//     fresh only while messages flow; broker-side lag comes from
//     kafka_exporter and the like.
//   - mcptrace_committed_offset{topic,partition}: the offset last committed
//     on an owned partition (the next offset to read, as Kafka stores it).
//   - mcptrace_assigned_partitions: partitions this member owns now.
//
// The per-partition gauges appear with their first value (not at 0 on
// assignment, which would claim a caught-up partition or a commit that never
// happened) and are deleted when the partition is revoked
// (Metrics.RevokePartition), so a member reports only the partitions it owns
// and no stale lag lingers after a rebalance; a goroutine of the old
// generation still holding the partition's handle cannot bring them back.
// The records and bytes counters of a revoked partition stay.
//
// Histogram:
//
//   - mcptrace_file_flush_seconds: time to make one batch of files durable
//     (roll, fsync and rename, or upload, up to the commit); buckets from
//     1 ms to 60 s.
//
// Plus promhttp_metric_handler_requests_total{code} and
// promhttp_metric_handler_errors_total{cause} for the scrapes themselves.
//
// # Endpoints
//
// Serve starts an HTTP server on -metrics-addr (host:port; ":0" picks a free
// port, see Server.Addr) with:
//
//   - GET /metrics: the metrics above in the Prometheus text format (or
//     OpenMetrics/protobuf, by content negotiation).
//   - GET /healthz: 200 "ok" while the process runs (liveness).
//   - GET /readyz: 200 "ready" when the process is ready, 503 with the reason
//     otherwise (readiness). For Kafka, ready means a member of the group
//     with partitions assigned, or caught up; the caller decides, through
//     the ready function it passes to Serve.
//
// Server.Shutdown drains in-flight requests and joins every goroutine of the
// server. A listen error is returned by Serve at once and names the address.
//
// Scrape and Parse read an endpoint back with the reference parser
// (prometheus/common/expfmt); tests use them to check a process's counters
// against the dataset it wrote.
package metrics
