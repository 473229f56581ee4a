// Command ingest reads MCP traffic logs, correlates and classifies every
// JSON-RPC exchange, and writes a Parquet dataset.
//
//	ingest [flags] PATH...
//
// With no PATH it ingests the bundled samples/ directory. See README.md.
package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"mcptrace/dataset"
	"mcptrace/decode"
	"mcptrace/pipeline"
	"mcptrace/redact"
)

// Exit statuses (README "Exit statuses"), the same for files and Kafka.
const (
	ExitOK          = 0  // every input read and written, nothing quarantined
	ExitInput       = 1  // an input could not be found, opened or read: the dataset is as it was before the run
	ExitUsage       = 2  // a bad flag value, policy or key: nothing was read
	ExitStopped     = 3  // a signal stopped the run: what was read is written, the summary says what was not
	ExitUncommitted = 4  // Kafka: rows durable whose offsets could not be committed
	ExitOutput      = 5  // the dataset could not be locked, written or published: it is as it was before the run
	ExitQuarantined = 6  // done and published, but some input was quarantined (the summary and the ledger count it)
	ExitInternal    = 70 // the run's own accounting does not balance: a bug (EX_SOFTWARE)
)

// exitFor is the status of a run that failed with err.
func exitFor(err error) int {
	switch {
	case errors.Is(err, dataset.ErrUnfinished), errors.Is(err, dataset.ErrLocked):
		return ExitOutput
	case pipeline.ErrorSide(err) == pipeline.SideOutput:
		return ExitOutput
	}
	return ExitInput
}

// exitDone is the status of a run that ended well: 6 when input was
// quarantined.
func exitDone(sum *pipeline.Summary) int {
	if sum.Quarantined > 0 {
		return ExitQuarantined
	}
	return ExitOK
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "./out", "output dataset directory")
	workers := fs.Int("workers", 0, "decode workers and correlator shards, and the cores ingest may use (0: every core)")
	maxLine := fs.Int("max-line", 16<<20, "longest accepted input line in bytes; longer lines are quarantined")
	rowGroup := fs.Int64("row-group", 65536, "rows per Parquet row group")
	maxDoc := fs.Int64("max-document", decode.DefaultMaxDocument, "most bytes one document (an OTLP export, an Inspector export), one HAR entry (a HAR is streamed, entry by entry) or one unterminated line may make ingest hold; past it the record is quarantined (a HAR entry: skipped, the rest decoded; otherwise the input ends there)")
	maxBody := fs.Int64("max-body", decode.DefaultMaxBody, "longest HTTP request or response body in bytes (as decoded); a record with a longer one is quarantined whole as body_too_large")
	maxEvents := fs.Int("max-sse-events", decode.DefaultMaxSSEEvents, "most message events one text/event-stream body may have; a record with more is quarantined whole as too_many_sse_events (events past the limit are counted, not read)")
	maxDepth := fs.Int("max-depth", decode.DefaultMaxDepth, fmt.Sprintf("deepest JSON nesting accepted in a line, document or body (1 to %d); a deeper record is quarantined as nesting_too_deep", decode.MaxMaxDepth))
	maxOpen := fs.Int("max-open-conversations", pipeline.DefaultMaxOpenConversations, "most conversations held open at once (0: no bound); past it the least recently active one is ended early, as the idle timeout ends one: its open exchanges are judged, their rows marked hold_cut and their reason naming the limit")
	commitEvery := fs.Duration("commit-interval", 30*time.Second, "a stream's rows are published this often (files are published once, at the end of the run)")
	waitLock := fs.Bool("wait-lock", false, "when another ingest is writing -out, wait for it to finish instead of failing at once")
	rollRows := fs.Int64("roll-rows", 1<<20, "finish a dataset file after this many rows and start the next")
	rollBytes := fs.Int64("roll-bytes", 128<<20, "finish a dataset file once it holds about this many bytes")
	rollAge := fs.Duration("roll-age", 0, "finish a dataset file this long after it was opened (0: never; file names then depend on the clock)")
	maxFiles := fs.Int("max-open-files", 8, "dataset files open at once, whatever the number of date partitions (memory is about 16 MiB each at most)")
	flushEvery := fs.Duration("flush-interval", time.Second, "a stream (standard input, a pipe) is handed on in what arrived within this interval, so a quiet stream still moves")
	keyFile := fs.String("pseudonym-key-file", "", "file holding the pseudonym key (hex or raw bytes); else $MCPTRACE_PSEUDONYM_KEY; else a random key for this run")
	keyID := fs.String("pseudonym-key-id", "k1", "key id that prefixes every pseudonym")
	quiet := fs.Bool("quiet", false, "log warnings and errors only")
	policyFile := fs.String("redact-policy", "", "YAML redaction policy: keep, pseudonymize, mask, truncate(N) or drop per output field (default: a safe built-in policy)")
	printPolicy := fs.Bool("print-policy", false, "print the effective redaction policy and exit")
	idle := fs.Duration("idle-timeout", 30*time.Minute, "end a conversation after this long without activity, in the logs' own time (0: only on DELETE or at the end)")
	lateness := fs.Duration("lateness", 10*time.Minute, "flag exchanges of records this far behind the newest time seen (0: never)")
	merge := fs.String("merge", "auto", "merge client-side and server-side rows of the same exchanges: auto (when both sides are present), on, off")
	format := fs.String("format", "", "read every input as this format instead of detecting it: "+formatList())
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof reads it)")
	memProfile := fs.String("memprofile", "", "write a heap profile (in use and allocated) to this file at the end of the run")
	peakProfile := fs.String("peakheapprofile", "", "write the heap profile taken after the collection that found the most live heap of the run to this file (what was live at the peak)")
	memLimit := fs.Int64("memory-limit", 0, "soft limit on the process's Go memory, in MiB (runtime/debug.SetMemoryLimit): near it the garbage collector runs more often, trading CPU for memory; 0 leaves the runtime's own setting (GOMEMLIMIT, else none). Not given (and without GOGC or GOMEMLIMIT): 224 MiB, raised with the live heap once more than about 140 MB stays live (to half as much again as what is live and a sixteenth more; above 256 MiB live, to the collector's heap goal and a quarter more), which keeps a wire log of any size within about 256 MiB of RSS")
	kf := registerKafkaFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: ingest [flags] PATH...\n\nReads MCP traffic logs and writes OUT/exchanges and OUT/quarantine as Parquet.\nPATH is a file, a directory (walked), a glob pattern or - for standard input; gzip, zlib and zstd\nare undone and each file's format is detected from its content.\nWith no PATH, ingests the bundled samples/ directory.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	log := newLogger(stderr, *quiet)
	if msgs := checkFlags(fs); len(msgs) > 0 {
		for _, m := range msgs {
			log.Error().Msg(m)
		}
		return ExitUsage
	}
	decode.SetMaxDepth(*maxDepth) // process-wide: every decoder of the run reads it
	memLimitGiven := false
	fs.Visit(func(f *flag.Flag) { memLimitGiven = memLimitGiven || f.Name == "memory-limit" })
	if *memLimit > 0 {
		debug.SetMemoryLimit(*memLimit << 20)
	}
	defer startPacer(*memLimit > 0, !memLimitGiven)()
	if *workers > 0 {
		// The stages run side by side, so one worker per stage already keeps
		// several cores busy: -workers also bounds the cores used.
		runtime.GOMAXPROCS(*workers)
	}
	policy := redact.DefaultPolicy()
	if *policyFile != "" {
		p, err := redact.LoadPolicy(*policyFile)
		if err != nil {
			log.Error().Err(err).Msg("redaction policy")
			return ExitUsage
		}
		policy = p
	}
	if *printPolicy {
		fmt.Fprint(stdout, policy.YAML())
		return ExitOK
	}
	inputs := fs.Args()
	if len(inputs) == 0 && !kf.enabled() {
		if _, err := os.Stat("samples"); err != nil {
			log.Error().Msg("no PATH given and no samples/ directory here: run from the repository root or name the logs to ingest")
			return ExitUsage
		}
		inputs = []string{"samples"}
	}
	stopProfiles, err := startProfiles(*cpuProfile, *memProfile, *peakProfile)
	if err != nil {
		log.Error().Err(err).Msg("profile")
		return ExitUsage
	}
	defer func() {
		if err := stopProfiles(); err != nil {
			log.Error().Err(err).Msg("profile")
		}
	}()
	ps, err := pseudonymizer(*keyFile, *keyID, log)
	if err != nil {
		log.Error().Err(err).Msg("pseudonym key")
		return ExitUsage
	}
	// The first SIGINT or SIGTERM stops reading: what was read is drained,
	// written and published, and ingest exits 3. A second one exits at once
	// (128 + the signal's number); nothing of this run is published then,
	// and the next run clears what it left.
	softStop := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	cfg := pipeline.Config{Policy: policy, Inputs: inputs, Format: *format, Merge: *merge, IdleTimeout: *idle, Lateness: *lateness, OutDir: *out, Workers: *workers, MaxLineBytes: *maxLine, MaxDocumentBytes: *maxDoc,
		MaxBodyBytes: *maxBody, MaxSSEEvents: *maxEvents, MaxOpenConversations: openConversations(*maxOpen), FlushInterval: *flushEvery, CommitInterval: *commitEvery,
		RowGroupRows: *rowGroup, Pseudonyms: ps, Stop: softStop, WaitLock: *waitLock,
		Roll: dataset.RollPolicy{MaxRows: *rollRows, MaxBytes: *rollBytes, MaxAge: *rollAge, MaxOpen: *maxFiles},
		Log:  log.Sample(&zerolog.BurstSampler{Burst: 20, Period: time.Second, NextSampler: &zerolog.BasicSampler{N: 1000}})}
	terminal := false
	if f, ok := stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		terminal = true
		cfg.ProgressEvery = time.Second
		cfg.Progress = func(p pipeline.Progress) { progressLine(log, p) }
	}
	if kf.enabled() {
		return runKafka(kf, cfg, sigs, softStop, stdout, log, terminal)
	}
	if strings.HasPrefix(*out, "s3://") {
		log.Error().Str("out", *out).Msg("object storage is written by Kafka consumers (-kafka-brokers); for files, write to a directory and copy it")
		return ExitUsage
	}
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		log.Warn().Str("signal", sig.String()).Msg("stopping: reading ends, what was read is being written (send the signal again to exit at once)")
		close(softStop)
		sig = <-sigs
		log.Error().Str("signal", sig.String()).Msg("second signal: exiting at once; nothing more of this run is published (a stream's earlier commits stay)")
		os.Exit(128 + signalNumber(sig))
	}()
	ctx := context.Background()
	log.Info().Strs("inputs", inputs).Str("out", *out).Msg("ingest started")
	sum, err := pipeline.Run(ctx, cfg)
	code := fileStatus(sum, err, *out, stdout, log)
	logFinished(log, sum, code, terminal)
	return code
}

// fileStatus reports how a file run ended and returns its exit status.
func fileStatus(sum *pipeline.Summary, err error, out string, stdout io.Writer, log zerolog.Logger) int {
	if errors.Is(err, pipeline.ErrStopped) {
		printSummary(stdout, sum)
		log.Warn().Int("not_read", len(sum.NotRead)).Int("partly_read", len(sum.Partial)).
			Msg("stopped by a signal: what was read is written; run again to ingest the rest")
		return ExitStopped
	}
	if errors.Is(err, dataset.ErrUnfinished) {
		log.Error().Err(err).Str("out", out).Msg("ingest failed while publishing: the run's output is recorded and the next ingest on this dataset finishes moving it into place")
		return ExitOutput
	}
	if err != nil && sum != nil && sum.StreamCommits > 0 {
		log.Error().Err(err).Str("out", out).Int("commits", sum.StreamCommits).
			Msg("ingest failed; the stream's rows published before the failure stay, nothing else of this run was published")
		return exitFor(err)
	}
	if err != nil {
		log.Error().Err(err).Str("out", out).Msg("ingest failed; the dataset is as it was before this run")
		return exitFor(err)
	}
	printSummary(stdout, sum)
	if !sum.Balanced() || !sum.Ledger.Balanced {
		log.Error().Msg("conservation check failed: some input lines are not accounted for (a bug: please report it)")
		return ExitInternal
	}
	return exitDone(sum)
}

// progressLine is one progress line on a terminal: records and bytes so
// far, the rate, and, when every input is a file (its size known), the
// share read and an estimate of the time left.
func progressLine(log zerolog.Logger, p pipeline.Progress) {
	ev := log.Info().Int64("records", p.Records).Str("read", humanBytes(p.Bytes)).
		Str("rate", humanBytes(int64(float64(p.Bytes)/max(p.Elapsed.Seconds(), 1e-3)))+"/s")
	if sh := p.Share(); sh >= 0 {
		ev = ev.Str("done", fmt.Sprintf("%.0f%%", 100*sh))
		if left := p.Left(); left >= 0 && sh > 0.01 {
			ev = ev.Str("left", left.Round(time.Second).String())
		}
	}
	ev.Msg("ingesting")
}

// logFinished logs the run's last line: on a terminal, that it finished
// and how; otherwise, for a cron job or a log pipeline, the same with the
// ledger (schema.Ledger) as a field, so nothing has to parse the summary.
func logFinished(log zerolog.Logger, sum *pipeline.Summary, code int, terminal bool) {
	ev := log.Info()
	if code != ExitOK && code != ExitQuarantined {
		ev = log.Warn()
	}
	ev = ev.Int("exit", code)
	if sum != nil {
		ev = ev.Str("elapsed", sum.Elapsed.Round(time.Millisecond).String()).Int64("records", sum.Records).Int64("exchanges", sum.Exchanges).Int64("quarantined", sum.Quarantined)
		if !terminal && sum.Ledger.Version != 0 {
			ev = ev.Interface("ledger", sum.Ledger)
		}
	}
	ev.Msg("ingest finished")
}

// openConversations is Config.MaxOpenConversations for the flag's value:
// 0 (no bound) is negative there, where 0 is the default.
func openConversations(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 1
}

func formatList() string {
	var names []string
	for _, f := range decode.Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

func newLogger(w io.Writer, quiet bool) zerolog.Logger {
	level := zerolog.InfoLevel
	if quiet {
		level = zerolog.WarnLevel
	}
	if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05"}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Str("cmd", "ingest").Logger()
}

func pseudonymizer(file, keyID string, log zerolog.Logger) (*redact.Pseudonymizer, error) {
	var raw []byte
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("cannot read -pseudonym-key-file %s: %w", file, err)
		}
		raw = b
	case os.Getenv("MCPTRACE_PSEUDONYM_KEY") != "":
		raw = []byte(os.Getenv("MCPTRACE_PSEUDONYM_KEY"))
	default:
		log.Warn().Msg("no pseudonym key given (-pseudonym-key-file or MCPTRACE_PSEUDONYM_KEY): using a random key for this run, so session pseudonyms will not join across runs")
		return redact.RandomPseudonymizer(), nil
	}
	// A key written as hex is decoded and must give 16 bytes or more; any
	// other key is used as it is (only a trailing line break is dropped).
	if s := strings.TrimSpace(string(raw)); len(s) > 0 && len(s)%2 == 0 {
		if b, err := hex.DecodeString(s); err == nil {
			if len(b) < 16 {
				return nil, fmt.Errorf("the pseudonym key is %d bytes of hex; use at least 16 random bytes (32 hex digits)", len(b))
			}
			return redact.NewPseudonymizer(keyID, b)
		}
	}
	return redact.NewPseudonymizer(keyID, []byte(strings.TrimRight(string(raw), "\r\n")))
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func printSummary(w io.Writer, s *pipeline.Summary) {
	fmt.Fprintf(w, "mcptrace ingest summary\n")
	fmt.Fprintf(w, "  inputs:        %d files, %d records, %s\n", len(s.Files), s.Records, humanBytes(s.Bytes))
	for _, f := range sortedKeys(intMap(s.ByFormat)) {
		fmt.Fprintf(w, "    %-20s %d files\n", f, s.ByFormat[f])
	}
	fmt.Fprintf(w, "  exchanges:     %d written\n", s.Exchanges)
	for _, o := range s.Outcomes() {
		fmt.Fprintf(w, "    %-20s %d\n", o.Outcome, o.Count)
	}
	if s.Merging {
		fmt.Fprintf(w, "  merged:        %d client/server pairs written as one row (sides = both)\n", s.Merged)
	}
	fmt.Fprintf(w, "  false successes (HTTP 2xx, then a failure): %d\n", s.FalseSuccess)
	fmt.Fprintf(w, "  suspect hidden errors (TOOL_SUCCESS whose text says it failed): %d\n", s.SuspectHidden)
	fmt.Fprintf(w, "  stuck on a dead session: %d\n", s.SessionStuck)
	fmt.Fprintf(w, "  side effects done twice (non-idempotent tool ran again): %d\n", s.DuplicateSideEffects)
	if s.ResumeProblems > 0 || s.IDConflicts > 0 {
		fmt.Fprintf(w, "  broken stream resumptions: %d; ids reused while open: %d\n", s.ResumeProblems, s.IDConflicts)
	}
	fmt.Fprintf(w, "  notifications: %d\n", s.Correlation.Notifications)
	fmt.Fprintf(w, "  stray messages (no matching request): %d\n", s.Correlation.StrayMessages)
	printCounts(w, "  redacted:      %d values", s.Redactions)
	if n := s.Correlation.Evicted; n > 0 {
		fmt.Fprintf(w, "  ended early:   %d conversations, more than -max-open-conversations %d open (their open exchanges' rows are hold_cut)\n", n, s.OpenLimit)
	}
	fmt.Fprintf(w, "  quarantined:   %d records\n", s.Quarantined)
	for _, r := range sortedKeys(s.ByReason) {
		fmt.Fprintf(w, "    %-20s %d\n", r, s.ByReason[r])
	}
	c := s.Correlation
	status := "OK"
	if !s.Balanced() {
		status = "MISMATCH"
	}
	printCounts(w, "  skipped:       %d records", s.Skipped)
	if len(s.SkippedEntries) > 0 {
		printCounts(w, "  not read:      %d directory entries or inputs, on purpose", s.SkippedEntries)
	}
	fmt.Fprintf(w, "  conservation:  %d records = %d observations + %d quarantined + %d skipped  [%s]\n",
		s.Records, s.Observations, s.Quarantined, s.SkippedTotal(), status)
	fmt.Fprintf(w, "                 %d observations = %d in exchanges + %d notification-only + %d stray + %d stderr + %d other\n",
		c.Observations, c.Contributing, c.NotificationOnly, c.Stray, c.Stderr, c.Other)
	if len(s.NotRead) > 0 || len(s.Partial) > 0 {
		fmt.Fprintf(w, "  stopped early: %d inputs not read, %d read in part\n", len(s.NotRead), len(s.Partial))
		for _, p := range s.Partial {
			fmt.Fprintf(w, "    read in part: %s\n", p)
		}
		for i, p := range s.NotRead {
			if i == 8 {
				fmt.Fprintf(w, "    ... and %d more\n", len(s.NotRead)-i)
				break
			}
			fmt.Fprintf(w, "    not read:     %s\n", p)
		}
	}
	printWritten(w, "exchanges", s.ExchangeFiles)
	printWritten(w, "quarantine", s.QuarantineOut)
	fmt.Fprintf(w, "  elapsed:       %s\n", s.Elapsed.Round(time.Millisecond))
}

// printWritten lists the files written, or how many and where when there
// are more than a few.
func printWritten(w io.Writer, table string, files []string) {
	if len(files) <= 4 {
		for _, f := range files {
			fmt.Fprintf(w, "  wrote %s\n", f)
		}
		return
	}
	dir := filepath.Dir(filepath.Dir(files[0]))
	fmt.Fprintf(w, "  wrote %d %s files under %s\n", len(files), table, dir)
}

// printCounts writes a total and its breakdown: "label (a 1, b 2)".
func printCounts(w io.Writer, label string, m map[string]int64) {
	fmt.Fprintf(w, label, sumCounts(m))
	for i, k := range sortedKeys(m) {
		sep := ", "
		if i == 0 {
			sep = " ("
		}
		fmt.Fprintf(w, "%s%s %d", sep, k, m[k])
	}
	if len(m) > 0 {
		fmt.Fprint(w, ")")
	}
	fmt.Fprintln(w)
}

func sumCounts(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func intMap(m map[string]int) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = int64(v)
	}
	return out
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
