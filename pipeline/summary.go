package pipeline

import (
	"context"
	"sort"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/classify"
	"mcptrace/correlate"
	"mcptrace/dataset"
	"mcptrace/metrics"
	"mcptrace/redact"
	"mcptrace/schema"
)

// Config says what to read, where to write and how.
type Config struct {
	Inputs []string // files, directories, glob patterns, "-" for standard input
	Format string   // force this format for every input; "" detects each by content
	// Merge says whether client-side and server-side rows of the same
	// exchanges are merged: "on", "off", or "auto" ("" too): on when the
	// inputs hold logs of both sides. Rows (never bodies) wait for the
	// other side for MergeWindow when both sides arrive side by side (wire
	// files, streams), else until the end of the run.
	Merge        string
	OutDir       string
	Workers      int // decode workers and correlator shards; 0: GOMAXPROCS
	MaxLineBytes int // longer lines are quarantined; 0: 16 MiB
	// MaxDocumentBytes caps what one record or document may make the
	// process hold (decode.DefaultMaxDocument when 0): past it the record
	// is quarantined with the limit named and the input ends there.
	MaxDocumentBytes int64
	// MaxBodyBytes and MaxSSEEvents are the record limits (decode.Limits;
	// 0: decode.DefaultMaxBody, decode.DefaultMaxSSEEvents): a record with
	// a longer HTTP body, or an event stream of more message events, is
	// quarantined whole, the limit named.
	MaxBodyBytes int64
	MaxSSEEvents int
	// MaxOpenConversations bounds the conversations open at once (0:
	// DefaultMaxOpenConversations; negative: no bound): a new one past it
	// ends the least recently active early, as the idle timeout would, its
	// open exchanges' rows marked hold_cut and their reason naming the
	// limit. The bound is shared evenly by the correlator shards.
	MaxOpenConversations int
	// FlushInterval: a stream (standard input, a pipe) is cut into units
	// of what arrived within it, so a quiet stream still moves on (0: 1s).
	FlushInterval time.Duration
	// MergeWindow is how long, in event time, a row waits for the other
	// side's view when both arrive side by side (0: Lateness plus
	// correlate.MaxSkew).
	MergeWindow time.Duration
	// CommitInterval: a stream's rows are published this often (0: 30s);
	// files are published once, at the end of the run.
	CommitInterval time.Duration
	RowGroupRows   int64 // rows per Parquet row group; 0: 65,536
	// IdleTimeout ends a conversation idle this long in event time;
	// Lateness flags exchanges of observations this far behind the newest
	// (see correlate.Correlator). 0 leaves each off.
	IdleTimeout, Lateness time.Duration
	// MaxHold closes a conversation still active this long (event time)
	// after it began, its rows marked hold_cut, so that it never holds a
	// Kafka partition's commit back further (0: never; RunKafka sets it).
	MaxHold    time.Duration
	Pseudonyms *redact.Pseudonymizer
	Policy     *redact.Policy // nil: redact.DefaultPolicy()
	Log        zerolog.Logger
	// Progress, when set, receives a progress line every ProgressEvery.
	Progress      func(p Progress)
	ProgressEvery time.Duration
	// Now gives the run's clock (quarantine rows record when they were seen).
	Now func() time.Time
	// Stop, when closed, ends the run softly: reading stops, what was read
	// is drained and written, and Run returns ErrStopped. nil: never.
	Stop <-chan struct{}

	// WaitLock waits for another writer of the dataset to finish instead of
	// failing at once.
	WaitLock bool
	// Roll says when dataset files are finished and the next one started
	// (package dataset's defaults when zero); RowGroupRows sets its row
	// groups.
	Roll dataset.RollPolicy

	// Metrics, when set, receives the run's counters (package metrics;
	// nil is a no-op).
	Metrics *metrics.Metrics

	// lowWaterByInput: each input is committed up to its own low-water
	// mark (Kafka partitions), not the run's.
	lowWaterByInput bool

	newSink func(ctx context.Context, cfg Config, sum *Summary, kept func(*Input)) (Sink, error) // tests swap the sink
}

// Progress is a snapshot of a running ingest.
type Progress struct {
	Records, Bytes int64
	Elapsed        time.Duration
	// Read and Total are the inputs' own bytes (compressed as they are on
	// disk) read so far and in all; Total is -1 when an input is a stream,
	// whose end is not known.
	Read, Total int64
}

// Share is the part of the input read so far, from 0 to 1 (-1: unknown).
func (p Progress) Share() float64 {
	if p.Total <= 0 {
		return -1
	}
	return min(1, float64(p.Read)/float64(p.Total))
}

// Left estimates the time left from the rate so far (-1: unknown).
func (p Progress) Left() time.Duration {
	sh := p.Share()
	if sh <= 0 {
		return -1
	}
	return time.Duration(float64(p.Elapsed) * (1 - sh) / sh)
}

// Summary is what a run did. Records = Skipped + Quarantined + Observations,
// where a record is a line of a line-oriented log, an entry of a JSON
// document (a HAR entry, a span), or a whole file that matched no format.
type Summary struct {
	Files        []string
	ByFormat     map[string]int // files per detected format
	Records      int64
	Bytes        int64
	Skipped      map[string]int64 // records deliberately not used, by why (blank, lifecycle, ...)
	Observations int64
	Quarantined  int64
	ByReason     map[string]int64
	Exchanges    int64
	ByOutcome    map[string]int64
	Correlation  correlate.Stats
	// OpenLimit is the open-conversation limit in force (0: none);
	// Correlation.Evicted counts the conversations it ended early.
	OpenLimit    int
	FalseSuccess int64 // HTTP 2xx on the final attempt, then a failure (classify.FalseSuccess)
	// Diagnosis counts (rows written with each flag set).
	SuspectHidden        int64            // TOOL_SUCCESS rows whose content says the tool failed
	SessionStuck         int64            // rows sent on, or answered for, a dead session
	DuplicateSideEffects int64            // non-idempotent tool calls that ran (or may have run) twice
	ResumeProblems       int64            // rows whose stream resumption went wrong
	IDConflicts          int64            // requests that reused the id of an open request
	Redactions           map[string]int64 // values each detector rule replaced (never the values)
	Merging              bool             // client and server views were merged
	Merged               int64            // pairs of rows merged into one
	MergeHeldMax         int              // most rows the merge held at once, waiting for the other side
	SkippedEntries       map[string]int64 // directory entries and inputs not read on purpose, by reason
	// StreamCommits counts the commits that published a stream's rows
	// before the end: a run that then fails keeps them.
	StreamCommits int
	NotRead       []string // inputs a soft stop left unopened
	Partial       []string // inputs a soft stop left part-read, with how far
	ExchangeFiles []string
	QuarantineOut []string
	Elapsed       time.Duration

	// Kafka (RunKafka).
	Rebalances   int   // generations this member took part in
	Deduplicated int64 // rows a replay met again, already in the dataset: not written twice
	Redelivered  int64 // messages below their partition's position, dropped (kafka-go #1398)
	CommitErrors int   // offset commits that failed (retried at the next commit)
	Uncommitted  int   // partitions whose durable rows were not all committed at the end
	// HeldForReplay counts rows the Linker or the Merger still held when a
	// generation ended keeping its open state: not written, rebuilt by the
	// replay of whoever owns the partition next.
	HeldForReplay int64

	// Ledger is the run's accounting per input and in total, as written to
	// the dataset's .mcptrace/ledger.json when the run publishes.
	Ledger schema.Ledger
}

// Balanced reports whether every line is accounted for, every observation
// reached a correlator, and every exchange the correlators formed was written.
func (s *Summary) Balanced() bool {
	return s.Records == s.SkippedTotal()+s.Quarantined+s.Observations && s.Observations == s.Correlation.Observations &&
		s.Exchanges+s.Merged+s.HeldForReplay == s.Correlation.Exchanges
}

// SkippedTotal is the number of records skipped on purpose.
func (s *Summary) SkippedTotal() int64 {
	var n int64
	for _, v := range s.Skipped {
		n += v
	}
	return n
}

// falseSuccess: the HTTP status said 2xx but the exchange failed (the one
// rule, classify.FalseSuccess; analyze counts with it too).
func falseSuccess(e *schema.Exchange) bool {
	return classify.FalseSuccess(classify.FinalStatus(e.HTTPStatuses), e.Outcome) != ""
}

// Outcomes returns the outcome counts in a stable order.
func (s *Summary) Outcomes() []struct {
	Outcome string
	Count   int64
} {
	var out []struct {
		Outcome string
		Count   int64
	}
	for k, v := range s.ByOutcome {
		out = append(out, struct {
			Outcome string
			Count   int64
		}{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Outcome < out[j].Outcome
	})
	return out
}

// DefaultMaxOpenConversations is Config.MaxOpenConversations' default
// (ingest -max-open-conversations): 250,000 open conversations, about
// 1.8 GiB at the 7.5 KiB each measured with 200,000 never-ended
// conversations (bench/RESULTS.md), above the benchmarks' 200,000.
const DefaultMaxOpenConversations = 250000
