package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"mcptrace/kafkasrc"
	"mcptrace/metrics"
	"mcptrace/objstore"
	"mcptrace/pipeline"
)

// kafkaFlags are the flags of ingest as a Kafka consumer.
type kafkaFlags struct {
	brokers          string
	topics           multiFlag
	group            string
	untilCaughtUp    bool
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	shutdownTimeout  time.Duration
	mergeWindow      time.Duration
	maxHold          time.Duration
	metricsAddr      string
	security         kafkasrc.Security
	s3               objstore.Config
	s3Cache          string
}

type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*m = append(*m, s)
		}
	}
	return nil
}

func registerKafkaFlags(fs *flag.FlagSet) *kafkaFlags {
	k := &kafkaFlags{}
	fs.StringVar(&k.brokers, "kafka-brokers", "", "consume Kafka instead of reading files: bootstrap brokers HOST:PORT[,HOST:PORT]")
	fs.Var(&k.topics, "kafka-topic", "topic to consume (repeat, or comma-separate, for several: co-partitioned client and server topics are merged)")
	fs.StringVar(&k.group, "kafka-group", "", "consumer group: every ingest in the group shares the topics' partitions and writes one dataset")
	fs.BoolVar(&k.untilCaughtUp, "kafka-until-caught-up", false, "consume until every owned partition reaches the end offset seen at start, write, commit and exit 0 (backfills, cron jobs)")
	fs.DurationVar(&k.sessionTimeout, "kafka-session-timeout", 30*time.Second, "how long the group waits for a silent member before giving its partitions to others")
	fs.DurationVar(&k.rebalanceTimeout, "kafka-rebalance-timeout", 30*time.Second, "how long a rebalance waits for every member to rejoin (a member that died during one is dropped after it); a drain after a revocation gives up at half of it")
	fs.DurationVar(&k.shutdownTimeout, "shutdown-timeout", 20*time.Second, "on SIGINT/SIGTERM, how long ingest may take to write, close and commit before it exits anyway")
	fs.DurationVar(&k.mergeWindow, "merge-window", pipeline.DefaultKafkaMergeWindow, "Kafka: how long, in the logs' time, a row waits for the other side's view before it is written alone")
	fs.DurationVar(&k.maxHold, "max-hold", pipeline.DefaultMaxHold, "Kafka: how long, in the logs' time, a conversation still active may hold its partition's commit back; past it its rows are written with hold_cut = true and its later records start a new conversation (0: no bound)")
	fs.StringVar(&k.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on HOST:PORT/metrics, with /healthz and /readyz (off when empty)")
	k.security.Flags(fs)
	fs.StringVar(&k.s3.Endpoint, "s3-endpoint", "", "with -out s3://BUCKET/PREFIX: the S3 endpoint, host:port or a URL (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS)")
	fs.StringVar(&k.s3.Region, "s3-region", "", "with -out s3://...: the region (default: $AWS_REGION, $AWS_DEFAULT_REGION)")
	fs.BoolVar(&k.s3.PathStyle, "s3-path-style", false, "with -out s3://...: address the bucket as a path (MinIO and most self-hosted stores)")
	fs.BoolVar(&k.s3.Insecure, "s3-insecure", false, "with -out s3://...: plain HTTP instead of HTTPS")
	fs.StringVar(&k.s3Cache, "s3-cache-dir", "", "with -out s3://...: local working directory for files before upload (default: a directory under the system's temporary directory, per bucket and prefix)")
	return k
}

func (k *kafkaFlags) enabled() bool { return k.brokers != "" || len(k.topics) > 0 || k.group != "" }

// runKafka runs ingest as a member of a consumer group. The first signal
// stops fetching: what is complete is written and committed, and ingest
// exits 0 (everything written committed) or 4 (some offsets could not be
// committed); past -shutdown-timeout, or on a second signal, it exits at
// once.
func runKafka(k *kafkaFlags, cfg pipeline.Config, sigs <-chan os.Signal, softStop chan struct{}, stdout io.Writer, log zerolog.Logger, terminal bool) int {
	if k.brokers == "" || len(k.topics) == 0 || k.group == "" {
		log.Error().Msg("Kafka needs -kafka-brokers, -kafka-topic and -kafka-group")
		return ExitUsage
	}
	if len(cfg.Inputs) > 0 {
		log.Error().Strs("paths", cfg.Inputs).Msg("with -kafka-brokers ingest reads Kafka only: drop the PATH arguments")
		return ExitUsage
	}
	dialer, err := k.security.Dialer(10 * time.Second)
	if err != nil {
		log.Error().Err(err).Msg("Kafka security flags")
		return ExitUsage
	}
	transport, err := k.security.Transport()
	if err != nil {
		log.Error().Err(err).Msg("Kafka security flags")
		return ExitUsage
	}
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		log.Warn().Str("signal", sig.String()).Dur("deadline", k.shutdownTimeout).
			Msg("stopping: fetching ends, what is complete is written and committed (send the signal again to exit at once)")
		close(softStop)
		select {
		case sig = <-sigs:
			log.Error().Str("signal", sig.String()).Msg("second signal: exiting at once; uncommitted records are replayed by the next owner")
			os.Exit(128 + signalNumber(sig))
		case <-time.After(k.shutdownTimeout):
			log.Error().Dur("deadline", k.shutdownTimeout).Msg("shutdown took longer than -shutdown-timeout: exiting; uncommitted records are replayed by the next owner")
			os.Exit(ExitOutput)
		}
	}()
	var store *objstore.Store
	if strings.HasPrefix(cfg.OutDir, "s3://") {
		bucket, prefix, err := objstore.ParseURL(cfg.OutDir)
		if err != nil {
			log.Error().Err(err).Msg("-out")
			return ExitUsage
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		store, err = objstore.Open(ctx, cfg.OutDir, objstore.ConfigFromEnv(k.s3))
		cancel()
		if err != nil {
			log.Error().Err(err).Msg("object storage")
			return ExitOutput
		}
		defer store.Close()
		url := cfg.OutDir
		cfg.OutDir = k.s3Cache
		if cfg.OutDir == "" {
			cfg.OutDir = filepath.Join(os.TempDir(), "mcptrace-s3", safeName(bucket+"-"+prefix))
		}
		log.Info().Str("out", url).Str("cache", cfg.OutDir).Msg("publishing to object storage")
	}
	status := &pipeline.KafkaStatus{}
	if k.metricsAddr != "" {
		m := metrics.New()
		srv, err := metrics.Serve(context.Background(), k.metricsAddr, m, status.Ready)
		if err != nil {
			log.Error().Err(err).Msg("-metrics-addr")
			return ExitUsage
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			srv.Shutdown(ctx)
		}()
		cfg.Metrics = m
		log.Info().Str("addr", srv.Addr()).Msg("serving /metrics, /healthz and /readyz")
	}
	if k.maxHold == 0 {
		k.maxHold = -1 // 0 on the command line: no bound
	}
	ko := pipeline.KafkaOptions{UntilCaughtUp: k.untilCaughtUp, MergeWindow: k.mergeWindow, MaxHold: k.maxHold, Status: status, Store: store,
		Consumer: kafkasrc.Config{Brokers: splitList(k.brokers), Topics: k.topics, Group: k.group, Dialer: dialer, Transport: transport,
			SessionTimeout: k.sessionTimeout, HeartbeatInterval: max(k.sessionTimeout/10, 100*time.Millisecond), RebalanceTimeout: k.rebalanceTimeout}}
	log.Info().Strs("topics", k.topics).Str("group", k.group).Str("out", cfg.OutDir).Msg("ingest started as a Kafka consumer")
	sum, err := pipeline.RunKafka(context.Background(), cfg, ko)
	code := kafkaStatus(k, sum, err, cfg.OutDir, stdout, log)
	// The last line, with (not on a terminal) the process's ledger: what
	// it committed; each partition's ledger is in the dataset.
	logFinished(log, sum, code, terminal)
	return code
}

// kafkaStatus reports how a consumer ended and returns its exit status.
func kafkaStatus(k *kafkaFlags, sum *pipeline.Summary, err error, out string, stdout io.Writer, log zerolog.Logger) int {
	if err != nil {
		log.Error().Err(err).Str("out", out).Msg("ingest failed; what was committed stays, the rest is replayed by the next owner")
		return exitFor(err)
	}
	printSummary(stdout, sum)
	printKafka(stdout, sum)
	if sum.Uncommitted > 0 {
		log.Error().Int("partitions", sum.Uncommitted).Msg("rows are durable whose offsets could not be committed: the next owner replays them and writes nothing twice")
		return ExitUncommitted
	}
	if !k.untilCaughtUp {
		return ExitOK // a service stopped: what it quarantined is in the dataset and its metrics
	}
	return exitDone(sum)
}

func printKafka(w io.Writer, s *pipeline.Summary) {
	fmt.Fprintf(w, "kafka: %d generation(s), %d row(s) met again and not written twice, %d redelivered message(s) dropped, %d failed commit(s)\n",
		s.Rebalances, s.Deduplicated, s.Redelivered, s.CommitErrors)
}

// safeName turns a bucket and prefix into a directory name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
