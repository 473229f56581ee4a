package schema

import "time"

// LedgerVersion is the version of the ledger file's layout (schema/README.md,
// "Ledger"). Fields are only added within a version.
const LedgerVersion = 1

// Ledger is one ingest run's accounting, written as JSON to
// OUT/.mcptrace/ledger.json when the run publishes, and logged as the run's
// last line on stderr when stderr is not a terminal: every record read is an
// observation, quarantined or skipped (by reason), per input and in total,
// and what went out.
type Ledger struct {
	Version   int           `json:"ledger"`
	StartedAt time.Time     `json:"started_at"`
	EndedAt   time.Time     `json:"ended_at"`
	Complete  bool          `json:"complete"` // every input was read to its end (false after a stop)
	Balanced  bool          `json:"balanced"` // every input's records = observations + quarantined + skipped, and every exchange formed was written
	Inputs    []LedgerInput `json:"inputs"`
	Totals    LedgerCounts  `json:"totals"`
	Out       LedgerOut     `json:"out"`
	Limits    LedgerLimits  `json:"limits"`
	// Kafka is set in a Kafka consumer's ledgers: a partition's (in its
	// dataset scope, schema/README.md "The ledger of a Kafka consumer")
	// and a consumer process's own (its last log line).
	Kafka *LedgerKafka `json:"kafka,omitempty"`
}

// LedgerKafka says whose accounting a Kafka ledger is and how far it goes.
type LedgerKafka struct {
	Group string `json:"group"`
	// Scope is the dataset scope of a partition's ledger ("" in a
	// process's ledger).
	Scope string `json:"scope,omitempty"`
	// Commits is how many commits the ledger covers: a partition's, by
	// every consumer that owned it; a process's, its own.
	Commits int64 `json:"commits"`
	// Writer is the consumer process that made the ledger's last commit
	// (a partition's) or whose ledger it is (a process's).
	Writer LedgerWriter `json:"writer"`
}

// LedgerWriter names a consumer process.
type LedgerWriter struct {
	Host       string    `json:"host"`
	PID        int       `json:"pid"`
	StartedAt  time.Time `json:"started_at"`
	Generation int32     `json:"generation"` // of the consumer group, at the last commit
}

// LedgerPartition is a Kafka input's place: the records counted are those
// of the messages at offsets [FirstOffset, NextOffset) (fewer than that
// span when the topic is compacted).
type LedgerPartition struct {
	Topic       string `json:"topic"`
	Partition   int    `json:"partition"`
	FirstOffset int64  `json:"first_offset"` // the first offset counted
	NextOffset  int64  `json:"next_offset"`  // the committed position: the next offset to read
	Messages    int64  `json:"messages"`     // messages counted (a message may hold several records)
}

// LedgerLimits are the limits the run applied (ingest's flags of the same
// names) and what they did beyond quarantining records, which
// quarantined_by counts under the limits' reasons (line_too_long,
// document_too_large, body_too_large, too_many_sse_events,
// nesting_too_deep).
type LedgerLimits struct {
	MaxLine              int   `json:"max_line"`
	MaxDocument          int64 `json:"max_document"`
	MaxBody              int64 `json:"max_body"`
	MaxSSEEvents         int   `json:"max_sse_events"`
	MaxDepth             int   `json:"max_depth"`
	MaxOpenConversations int   `json:"max_open_conversations"` // 0: no bound
	// ConversationsEnded is how many conversations were ended early
	// because a new one would have passed max_open_conversations.
	ConversationsEnded int64 `json:"conversations_ended"`
}

// LedgerCounts is where the records of one input, or of all, went.
type LedgerCounts struct {
	Records       int64            `json:"records"`
	Bytes         int64            `json:"bytes"`
	Observations  int64            `json:"observations"`
	Quarantined   int64            `json:"quarantined"`
	QuarantinedBy map[string]int64 `json:"quarantined_by"`
	Skipped       int64            `json:"skipped"`
	SkippedBy     map[string]int64 `json:"skipped_by"`
}

// Balanced reports whether every record is accounted for.
func (c *LedgerCounts) Balanced() bool {
	var q, s int64
	for _, n := range c.QuarantinedBy {
		q += n
	}
	for _, n := range c.SkippedBy {
		s += n
	}
	return c.Records == c.Observations+c.Quarantined+c.Skipped && q == c.Quarantined && s == c.Skipped
}

// Add adds o's counts to c.
func (c *LedgerCounts) Add(o *LedgerCounts) {
	c.Records += o.Records
	c.Bytes += o.Bytes
	c.Observations += o.Observations
	c.Quarantined += o.Quarantined
	c.Skipped += o.Skipped
	c.QuarantinedBy = addCounts(c.QuarantinedBy, o.QuarantinedBy)
	c.SkippedBy = addCounts(c.SkippedBy, o.SkippedBy)
}

func addCounts(into, from map[string]int64) map[string]int64 {
	if into == nil {
		into = map[string]int64{}
	}
	for k, v := range from {
		into[k] += v
	}
	return into
}

// LedgerInput is one input's line of the ledger.
type LedgerInput struct {
	Name     string `json:"name"`   // as given or walked
	ID       string `json:"id"`     // the dataset's key for it
	Format   string `json:"format"` // detected or forced ("" when never opened)
	Complete bool   `json:"complete"`
	LedgerCounts
	Kafka *LedgerPartition `json:"kafka,omitempty"` // a topic partition's offsets
}

// LedgerOut is what the run wrote.
type LedgerOut struct {
	Exchanges       int64            `json:"exchanges"`        // rows in exchanges/
	ByOutcome       map[string]int64 `json:"by_outcome"`       // exchanges per outcome
	MergedPairs     int64            `json:"merged_pairs"`     // client and server rows written as one
	Notifications   int64            `json:"notifications"`    // notification messages seen (not rows)
	FalseSuccesses  int64            `json:"false_successes"`  // HTTP 2xx, then a failure
	QuarantineRows  int64            `json:"quarantine_rows"`  // rows in quarantine/ (= totals.quarantined)
	ExchangeFiles   int              `json:"exchange_files"`   // files published this run
	QuarantineFiles int              `json:"quarantine_files"` // files published this run
}
