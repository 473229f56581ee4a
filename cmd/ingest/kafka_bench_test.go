package main

// Throughput of the real ingest binary as a Kafka consumer (issue 9): one
// consumer, and two consumers in one group, each run until caught up on
// the same ~100,000 records over 6 partitions of an in-process kfake
// broker. bench/kafka.sh runs the two sub-benchmarks alternately and prints
// the ratio two/one.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mcptrace/dataset"
	"mcptrace/internal/kafkatest"
)

// benchRecords and benchPartitions shape the benchmark's topic.
const (
	benchRecords    = 100000
	benchPartitions = 6
	// benchGuard bounds one run of the consumers: it turns a hang into a
	// failure and asserts nothing about speed.
	benchGuard = 10 * time.Minute
)

// gnuTime is GNU time, or "" when it is not installed: a consumer's peak
// RSS is measured through it. wait4's rusage of a child of the test process
// would not do: Go starts children with clone(CLONE_VM|CLONE_VFORK), and
// Linux seeds a process's maxrss at exec with the high-water mark of the mm
// it leaves, here the test process's own (the broker and the records, some
// 450 MiB), so every child would report at least that.
var gnuTime = func() string {
	if fi, err := os.Stat("/usr/bin/time"); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return "/usr/bin/time"
	}
	return ""
}()

// benchIngestBinary builds cmd/ingest into a directory of the benchmark
// (ingestBinary takes a *testing.T).
func benchIngestBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "ingest")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkKafkaConsumers measures records per second of the ingest binary
// consuming a topic to its end with -kafka-until-caught-up and default
// flags otherwise (-workers: one per core): "one" runs one consumer, "two"
// starts two in one group at once and times until both have exited. Every
// iteration uses a fresh group and a fresh dataset and checks that the
// consumers exited 0 and committed every partition's end offset.
//
// Metrics: records/s (records produced / wall time), exchanges/op (rows of
// the dataset: the same for one and two when nothing is lost or doubled),
// read/op (records the consumers read, counting replays after a
// rebalance), cpu-s/op (user + system seconds of the consumers), peak-RSS-
// MiB (the largest consumer's maximum resident set as GNU time reports it;
// left out, with a log line, when /usr/bin/time is missing), cores
// (runtime.NumCPU). Within one process the sub-benchmarks run in order,
// all counts of one before two, whatever -count: bench/kafka.sh alternates
// them by running one process for each.
func BenchmarkKafkaConsumers(b *testing.B) {
	bin := benchIngestBinary(b)
	c := kafkatest.Start(b, kafkatest.Options{Topics: map[string]int{kafkaTopic: benchPartitions}})
	recs := kafkatest.Synth(kafkatest.SynthOptions{Topic: kafkaTopic, Partitions: benchPartitions, Records: benchRecords, Sessions: 600})
	kafkatest.Produce(b, c.Addrs(), recs)
	end := kafkatest.End(b, c.Addrs(), kafkaTopic)
	b.Logf("%d records over %d partitions; %d cores (runtime.NumCPU), %s", len(recs), benchPartitions, runtime.NumCPU(), runtime.Version())
	for _, bc := range []struct {
		name      string
		consumers int
	}{{"one", 1}, {"two", 2}} {
		b.Run(bc.name, func(b *testing.B) {
			benchConsumers(b, bin, c, end, len(recs), bc.consumers)
		})
	}
}

// benchProc is one consumer of a benchmark run.
type benchProc struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan struct{}
	err            error
	exited         time.Time // when Wait returned
	timeFile       string    // GNU time's report ("" without GNU time)
}

// kill ends the consumer and, with GNU time in front of it, ingest too
// (they share a process group of their own).
func (p *benchProc) kill() { syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }

// usage returns the consumer's CPU time and, under GNU time, its peak RSS
// in KiB (-1 without GNU time).
func (p *benchProc) usage() (cpu time.Duration, rssKiB int64, err error) {
	if p.timeFile == "" {
		return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime(), -1, nil
	}
	data, err := os.ReadFile(p.timeFile)
	if err != nil {
		return 0, 0, err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var user, sys float64
	if _, err := fmt.Sscanf(lines[len(lines)-1], "%d %f %f", &rssKiB, &user, &sys); err != nil {
		return 0, 0, fmt.Errorf("GNU time's report %q: %v", data, err)
	}
	return time.Duration((user + sys) * float64(time.Second)), rssKiB, nil
}

func (p *benchProc) String() string {
	return fmt.Sprintf("%v\nstdout:\n%s\nstderr:\n%s", p.cmd.Args, &p.stdout, &p.stderr)
}

var recordsRead = regexp.MustCompile(`(?m)^  inputs: +\d+ files, (\d+) records`)

func benchConsumers(b *testing.B, bin string, c *kafkatest.Cluster, end kafkatest.Offsets, records, consumers int) {
	var (
		read, exchanges int64
		cpu             time.Duration
		peakKiB         int64 = -1
	)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		group := fmt.Sprintf("bench-%d-%d-%d", consumers, i, time.Now().UnixNano())
		out := b.TempDir()
		procs := make([]*benchProc, consumers)
		for j := range procs {
			p := &benchProc{done: make(chan struct{})}
			args := []string{bin, "-kafka-brokers", strings.Join(c.Addrs(), ","), "-kafka-topic", kafkaTopic,
				"-kafka-group", group, "-kafka-until-caught-up", "-quiet", "-out", out}
			if gnuTime != "" {
				p.timeFile = filepath.Join(b.TempDir(), "time.txt")
				args = append([]string{gnuTime, "-f", "%M %U %S", "-o", p.timeFile}, args...)
			}
			p.cmd = exec.Command(args[0], args[1:]...)
			p.cmd.Env = append(os.Environ(), "MCPTRACE_PSEUDONYM_KEY="+testKeyHex)
			p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			p.cmd.WaitDelay = 5 * time.Second
			p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
			procs[j] = p
		}
		b.StartTimer()
		start := time.Now()
		for _, p := range procs {
			if err := p.cmd.Start(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { // a failed iteration leaves no process behind
				select {
				case <-p.done:
				default:
					p.kill()
					<-p.done
				}
			})
			go func() {
				p.err = p.cmd.Wait()
				p.exited = time.Now()
				close(p.done)
			}()
		}
		guard := time.After(benchGuard)
		for _, p := range procs {
			select {
			case <-p.done:
			case <-guard:
				b.StopTimer()
				for _, q := range procs {
					q.kill()
				}
				b.Fatalf("consumers did not finish within %v (a hang); killed\n%s", benchGuard, p)
			}
		}
		b.StopTimer()
		for j, p := range procs {
			if code := exitCode(p.err); code != 0 {
				b.Fatalf("consumer exited %d\n%s", code, p)
			}
			m := recordsRead.FindStringSubmatch(p.stdout.String())
			if m == nil {
				b.Fatalf("no records count in the summary\n%s", p)
			}
			n, _ := strconv.ParseInt(m[1], 10, 64)
			read += n
			pcpu, rss, err := p.usage()
			if err != nil {
				b.Fatalf("consumer %d: %v", j+1, err)
			}
			cpu += pcpu
			peakKiB = max(peakKiB, rss)
			b.Logf("consumer %d of %d: exited after %.2f s, read %d records, %.2f cpu-s, peak RSS %s",
				j+1, consumers, p.exited.Sub(start).Seconds(), n, pcpu.Seconds(), mib(rss))
		}
		got := kafkatest.Committed(b, c.Addrs(), group, kafkaTopic)
		for p, e := range end[kafkaTopic] {
			if got[kafkaTopic][p] != e {
				b.Fatalf("partition %d: committed %d, end offset %d\n%s", p, got[kafkaTopic][p], e, procs[0])
			}
		}
		man, err := dataset.ReadManifest(out)
		if err != nil {
			b.Fatal(err)
		}
		rows := man.Rows("exchanges")
		if i > 0 && rows != exchanges/int64(i) {
			b.Fatalf("iteration %d wrote %d exchanges, the ones before %d each", i, rows, exchanges/int64(i))
		}
		exchanges += rows
		if err := os.RemoveAll(out); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(records)*n/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(exchanges)/n, "exchanges/op")
	b.ReportMetric(float64(read)/n, "read/op")
	b.ReportMetric(cpu.Seconds()/n, "cpu-s/op")
	if peakKiB >= 0 {
		b.ReportMetric(float64(peakKiB)/1024, "peak-RSS-MiB")
	} else {
		b.Log("no peak RSS: /usr/bin/time (GNU time) is not installed")
	}
	b.ReportMetric(float64(runtime.NumCPU()), "cores")
}

func mib(kib int64) string {
	if kib < 0 {
		return "unknown (no GNU time)"
	}
	return fmt.Sprintf("%.1f MiB", float64(kib)/1024)
}
