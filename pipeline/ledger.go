package pipeline

import (
	"cmp"
	"maps"
	"time"

	"mcptrace/correlate"
	"mcptrace/decode"
	"mcptrace/schema"
)

// account is the input's line of the ledger, kept by the sequencer (one
// goroutine) as it places each record.
func (in *Input) account() *schema.LedgerCounts {
	if in.acct.SkippedBy == nil {
		in.acct.SkippedBy, in.acct.QuarantinedBy = map[string]int64{}, map[string]int64{}
	}
	return &in.acct
}

// buildLedger is the run's accounting so far (schema.Ledger): final once
// the last round is written.
func (p *run) buildLedger(now time.Time) schema.Ledger {
	l := schema.Ledger{Version: schema.LedgerVersion, StartedAt: p.started.UTC(), EndedAt: now.UTC(), Complete: true, Balanced: true}
	for _, in := range p.inputs {
		a := in.acct // a copy: the sequencer owns the input's own
		a.SkippedBy, a.QuarantinedBy = cloneCounts(a.SkippedBy), cloneCounts(a.QuarantinedBy)
		li := schema.LedgerInput{Name: in.Name, ID: in.ID, Format: in.Format, Complete: in.Finished.Load(), LedgerCounts: a}
		l.Complete = l.Complete && li.Complete
		l.Balanced = l.Balanced && li.Balanced()
		l.Totals.Add(&li.LedgerCounts)
		l.Inputs = append(l.Inputs, li)
	}
	if l.Totals.SkippedBy == nil {
		l.Totals.SkippedBy, l.Totals.QuarantinedBy = map[string]int64{}, map[string]int64{}
	}
	var c correlate.Stats
	for _, s := range p.shards {
		c.Add(s.stats)
	}
	sum := p.sum
	l.Balanced = l.Balanced && l.Totals.Balanced() && l.Totals.Records == sum.Records &&
		sum.Observations == c.Observations && sum.Exchanges+sum.Merged+sum.HeldForReplay == c.Exchanges
	l.Out = schema.LedgerOut{Exchanges: sum.Exchanges, ByOutcome: maps.Clone(sum.ByOutcome), MergedPairs: sum.Merged,
		Notifications: c.Notifications, FalseSuccesses: sum.FalseSuccess, QuarantineRows: sum.Quarantined,
		ExchangeFiles: len(sum.ExchangeFiles), QuarantineFiles: len(sum.QuarantineOut)}
	if l.Out.ByOutcome == nil {
		l.Out.ByOutcome = map[string]int64{}
	}
	l.Limits = ledgerLimits(p.cfg, c.Evicted)
	return l
}

// ledgerLimits is the ledger's account of the limits cfg applies, with
// ended the conversations ended early by the open-conversation limit.
func ledgerLimits(cfg *Config, ended int64) schema.LedgerLimits {
	return schema.LedgerLimits{MaxLine: cfg.MaxLineBytes, MaxDocument: cfg.MaxDocumentBytes,
		MaxBody: cmp.Or(cfg.MaxBodyBytes, decode.DefaultMaxBody), MaxSSEEvents: cmp.Or(cfg.MaxSSEEvents, decode.DefaultMaxSSEEvents),
		MaxDepth: decode.MaxDepth(), MaxOpenConversations: max(cfg.MaxOpenConversations, 0), ConversationsEnded: ended}
}

// cloneCounts copies a count map, empty rather than nil (the ledger's JSON
// has {} for no reasons).
func cloneCounts(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return maps.Clone(m)
}
