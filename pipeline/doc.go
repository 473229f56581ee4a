// Package pipeline is mcptrace's engine: it runs the one-way flow source →
// decode → correlate → classify → redact → sink over files, standard input
// and pipes (and, next, Kafka), and carries acknowledgements back.
//
// # Stages and who owns what
//
// Each stage is behind a small interface or a function, in its own file, and
// Run (pipeline.go) only composes them:
//
//   - Source (source.go) yields Units in order: a chunk of whole lines of a
//     line log, or a whole input for its format's decoder. A Unit carries its
//     Input, the position range of its records (First, Last) and an AckFunc.
//     The file source expands and opens inputs through package input (one
//     open per input, the head peeked from the reader that is then decoded),
//     reads line logs through decode.ReadLines in a goroutine of its own, and
//     cuts a stream into units of what arrived within Config.FlushInterval.
//     Next returns io.EOF at the end; the Kafka source of the next issue is a
//     second implementation.
//   - Decode (decodestage.go) fans out over Config.Workers goroutines. Each
//     unit's output goes, in parts, on a channel of its own, announced before
//     the unit is decoded; so memory stays bounded by a few parts per worker.
//   - The sequencer (pipeline.go) reads the units' outputs in run order,
//     accounts for every record, gives every record a seq (Observation.Seq),
//     stamps observations with the run's event clock (correlate.Clock),
//     routes each by its conversation (correlate.ShardKey) to one shard, and
//     ends a round after every part with a marker carrying a correlate.Mark.
//     Quarantine rows travel as a stream of their own.
//   - Shards (shard.go), one per worker, each own a correlate.Correlator:
//     pairing and classification (package classify, pure) of the
//     conversations routed to them. At each marker a shard advances its
//     correlator to the Mark (idle conversations end there) and hands over
//     the round's items, in parts of at most 1,024 items (partItems): a
//     round that closes many conversations at once (the end of input, an
//     idle sweep) is never held whole between stages.
//   - The orderer (shard.go) reads one round from every stream and merges
//     its items, part by part, in correlate.Key order (each shard's come in
//     that order), an order that does not depend on the number of shards;
//     this is why -workers 1 and -workers 4 write the same bytes. Without
//     a merge, the writer writes the rows of a large round as they come.
//   - The writer (pipeline.go, in Run's goroutine) feeds the items to one
//     correlate.Linker (links between the conversations of one log: retries
//     in the client's next session, re-initialisation, expired sessions),
//     then, when the run holds both sides, to the correlate.Merger (rows wait
//     -lateness for the other side when every input is a stream, and to the
//     end for files, which are read one after another); it redacts the rows
//     on every core (redactrows.go: every field the policy covers) and hands
//     rows and quarantine rows, attributed to their input, to the Sink.
//   - Sink (sink.go) is the dataset (package dataset): rows are staged in
//     rolling files per (table, date partition, input); Commit publishes them
//     and replaces what the same inputs wrote before; Abort leaves the
//     dataset as it was.
//
// # Acknowledgements
//
// Every unit is acknowledged exactly once. The sequencer registers each unit,
// once decoded, with its input's Checkpoint (the highest contiguous
// acknowledged position: the ledger for files, the commit point for Kafka)
// and with the run's ackQueue. A unit is acknowledged with nil once every
// row and quarantine record it produced is in a published file: after the
// commit, the queue acknowledges, in run order, every unit whose records all
// have a seq below the bound (the commit's round, capped by the oldest seq
// that open state still needs: the shards', the Linker's and the Merger's
// LowWater). A unit that produced nothing is acknowledged with the next
// commit after it. A failed or cancelled run acknowledges every unit with
// its error, so a source may replay.
//
// # Lifecycle
//
// The sink is opened (and the dataset locked) before anything is read; the
// source starts last and stops first: on a soft stop (Config.Stop) it stops
// handing out units, decoders end at the next record (decode.Stopper), a
// stream's blocked read is interrupted, and everything in flight drains
// through the shards, the Linker and the Merger into the sink, which then
// publishes; Run returns ErrStopped with the summary, whose NotRead and
// Partial say what was left. Cancelling the context abandons the run: every
// stage returns, every goroutine is joined (tests check it on every path),
// and the sink aborts.
//
// # Accounting
//
// Every input record (a line, a HAR entry, a span, or a whole input that
// matches no format or cannot be decompressed) becomes an observation, a
// quarantine row (with a reason, its source and position, and a masked
// excerpt), or a skip counted by why; directory entries skipped on purpose
// are counted by reason too. The summary checks that these add up.
package pipeline
