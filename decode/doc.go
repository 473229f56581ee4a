// Package decode turns input bytes into observations: it reads the mcptrace
// wire log (one JSON object per line), parses every HTTP body and stdio frame
// once into JSON-RPC messages, and parses text/event-stream bodies following
// the WHATWG server-sent events rules. A line that cannot be used comes back
// as a *LineError with a stable reason code, for the quarantine.
//
// Decoding is pure and safe to run on many goroutines at once.
//
// # When each message was sent or arrived
//
// Every message carries the log's own time for it (schema.Message.At, zero
// when the log does not say): a request body or a stdio frame when it was
// sent (the record's ts, the line's timestamp); a JSON response body at the
// record's end; a stream's events at the times the log gives them (the wire
// log's response.event_times, a HAR entry's _eventSourceMessages), else, on
// a POST's stream, the last event at the record's end and (HAR) the others
// at the start of the receive phase. The correlator orders a cancellation
// and a response by these times (late_response), not by the order of the
// records.
//
// # One line loop
//
// ReadLines is the only loop over the lines of a one-record-per-line input
// (wire, stdio JSONL, Claude Desktop, VS Code, OTLP NDJSON); the decoders
// here use it and so does the pipeline when it cuts a wire log into chunks.
// It drops a UTF-8 byte order mark at the start of line 1, gives each line's
// number, byte offset and size, and reports a line over the line limit as
// TooLong with the first KiB of it (Head) for the quarantine excerpt.
//
// # One pass
//
// A wire-log line is read once (WireDecoder, WireLine): a hand-written
// scanner over the line's bytes validates it as it walks (the JSON grammar
// exactly as gjson.ValidBytes accepts it, UTF-8 inside strings, nesting no
// deeper than MaxDepth; the three checks it replaces each read the whole
// line) and records where the members every later step reads are, without
// copying. It reads a string eight bytes at a time, jumping to the first
// byte it must look at (a quote, a backslash, a control character, a byte
// from 0x80), so a long body costs about one step per escape. A body (a
// request's or response's, a stdio line) is unescaped in that same step
// (scanner.strInto writes each eight bytes as it tests them, and each
// escape's value) into scratch memory, then copied into the observation's
// own memory, sized exactly (one allocation for all its messages' text),
// and its messages are read there in one pass each (AppendMessages,
// msgReader), which fills Kind, ID, Method, the hashes and the typed
// schema.RPC fields that classify and the correlator read instead of
// parsing Raw again. An event-stream body is cut into lines in that
// scratch memory, and an event's data becomes messages as the event is
// dispatched. On a line longer than 1 MiB the scratch would cost more
// memory than it saves work: there a body is unescaped afterwards, from
// its literal (jsonstr.UnescapeInto; an event stream 32 KiB at a time,
// never copied whole). With Fold, a
// run of notifications of one method (a million progress events) becomes
// one message that counts them. Strings that outlive the line (session
// ids, URLs, names, ids, methods) are interned per decoder, so nothing
// keeps the line alive and repeated values share one copy.
//
// Why hand-written rather than gjson: gjson's Get rescans the object from
// its start for every member and its Parse copies the line into a string;
// a general JSON decoder (encoding/json) allocates per value. What a line
// needs is one forward walk that knows which members it wants.
//
// The one pass settles the common line; anything out of the ordinary (an
// invalid line, a member given twice where the first and the last would be
// read differently, an escaped member name, a value of an unexpected kind,
// any error to report) is decoded the general way, member by member with
// gjson, exactly as before. A message whose members the readers would read
// differently that way gets no RPC (schema.RPC says when), and its readers
// parse Raw. The differential tests (scan_test.go, wirefast_test.go) hold
// the one pass to the gjson decoder it replaces, line by line and field by
// field, on the samples, hostile inputs and their mutations, and fuzz it.
//
// # Limits: what one record or document may make the process hold
//
//   - The line limit (LineLimiter, MaxLine; DefaultMaxLine 16 MiB; ingest
//     -max-line): a longer line is quarantined as ReasonLineTooLong and
//     skipped up to its newline; decoding goes on.
//
//   - The document limit (DocumentLimiter, MaxDocument; DefaultMaxDocument
//     256 MiB; ingest -max-document): a whole-document input (Inspector
//     export, a pretty-printed OTLP document) larger than it is quarantined
//     once as ReasonDocumentTooLarge, the limit named in the detail, and
//     decoding of that input ends; no more than the limit is ever held. The
//     skip of an over-long line that runs past the document limit without a
//     newline is quarantined the same way and ends the input too, so an
//     endless input with a forced format (-format har /dev/zero, -format wire
//     /dev/zero) ends. The document limit also caps the line limit. A HAR
//     is streamed and the limit bounds one entry instead (harstream.go): an
//     entry past it is quarantined as ReasonDocumentTooLarge where it is and
//     decoding goes on; the document may be harReadFactor times the limit.
//
//   - The record limits (RecordLimiter, LimitsOf, recordlimits.go; ingest
//     -max-body, DefaultMaxBody 64 MiB, and -max-sse-events,
//     DefaultMaxSSEEvents 1,048,576): a record with an HTTP body longer,
//     as decoded, or an event stream of more message events is
//     quarantined whole (ReasonBodyTooLarge, ReasonTooManyEvents, the
//     flag and value named) and decoding goes on. BuildHTTP refuses it for
//     every format that has HTTP bodies; the wire one pass measures a
//     literal only when it is longer than the limit, and stops reading a
//     stream's events into messages at the limit.
//
//   - The depth limit (MaxDepth, SetMaxDepth; DefaultMaxDepth 512; ingest
//     -max-depth): process-wide, read as each line or document is checked.
//
// After a record past the document limit the decoder returns an error wrapping ErrLimit: the
// record is already quarantined, and the caller must neither report it again
// nor read the rest of the input.
//
// # Stopping
//
// An Emitter that implements Stopper is asked before each record (and
// between reads of a whole document); once Stopped reports true the decoder
// returns ErrStopped at once. What it emitted before stands; nothing more is
// read. A decoder blocked in a read of a quiet pipe notices only when the
// read returns.
package decode
