package kafkatest

import (
	"net"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Options shape a cluster.
type Options struct {
	Brokers int            // brokers in the cluster (default 1; with Ports, len(Ports))
	Topics  map[string]int // topics to create: name → partitions (at least 1)

	// MinSessionTimeout is the smallest session timeout the group
	// coordinator accepts (default 1 s), so a test can give a consumer a
	// short one and have it evicted quickly after a SIGKILL.
	MinSessionTimeout time.Duration

	// DataDir is where the cluster persists its log and group state
	// (default: a new t.TempDir). The same directory is reloaded by
	// Restart and Resume.
	DataDir string

	// Ports to listen on, one per broker (default: ports the OS picks;
	// Restart reuses whichever ports the first start got).
	Ports []int
}

// Cluster is a running in-process Kafka cluster (kfake) for one test. Its
// methods may be called from several goroutines.
type Cluster struct {
	o     Options
	addrs []string

	mu sync.Mutex
	kc *kfake.Cluster // nil while stopped
}

// Start starts a cluster with the topics of o and closes it when the test
// ends. It fails the test if the cluster cannot start.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	if len(o.Ports) > 0 {
		if o.Brokers != 0 && o.Brokers != len(o.Ports) {
			t.Fatalf("kafkatest: Options.Brokers is %d but %d ports were given", o.Brokers, len(o.Ports))
		}
		o.Brokers = len(o.Ports)
	}
	if o.Brokers <= 0 {
		o.Brokers = 1
	}
	if o.MinSessionTimeout <= 0 {
		o.MinSessionTimeout = time.Second
	}
	if o.DataDir == "" {
		o.DataDir = t.TempDir() // before the Cleanup below, so it is removed after Close
	}
	for name, n := range o.Topics {
		if n < 1 {
			t.Fatalf("kafkatest: topic %q has %d partitions; give at least 1", name, n)
		}
	}
	c := &Cluster{o: o}
	kc, err := c.newKfake(o.Ports)
	if err != nil {
		t.Fatalf("kafkatest: starting kfake: %v", err)
	}
	c.kc = kc
	c.addrs = kc.ListenAddrs()
	c.o.Ports = nil
	for _, a := range c.addrs {
		_, p, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatalf("kafkatest: kfake listens on %q: %v", a, err)
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			t.Fatalf("kafkatest: kfake listens on %q: %v", a, err)
		}
		c.o.Ports = append(c.o.Ports, port)
	}
	t.Cleanup(c.Close)
	return c
}

func (c *Cluster) newKfake(ports []int) (*kfake.Cluster, error) {
	opts := []kfake.Opt{
		kfake.NumBrokers(c.o.Brokers),
		kfake.GroupMinSessionTimeout(c.o.MinSessionTimeout),
		kfake.DataDir(c.o.DataDir),
	}
	if len(ports) > 0 {
		opts = append(opts, kfake.Ports(ports...))
	}
	names := make([]string, 0, len(c.o.Topics))
	for name := range c.o.Topics {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		opts = append(opts, kfake.SeedTopics(int32(c.o.Topics[name]), name))
	}
	return kfake.NewCluster(opts...)
}

// Addrs returns the brokers' host:port addresses, the bootstrap list for
// -kafka-brokers (strings.Join(c.Addrs(), ",")). They stay the same across
// Restart.
func (c *Cluster) Addrs() []string { return append([]string(nil), c.addrs...) }

// Kfake returns the running kfake cluster, for what this package does not
// wrap (fault injection with Control, ShufflePartitionLeaders, ...), or nil
// while the cluster is stopped. After Restart it is a different value.
func (c *Cluster) Kfake() *kfake.Cluster {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kc
}

// Close shuts the cluster down (persisting its state to DataDir). It is
// safe to call more than once; Start registers it with t.Cleanup.
func (c *Cluster) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kc != nil {
		c.kc.Close()
		c.kc = nil
	}
}

// Stop shuts the cluster down as Close does: clients' connections drop and
// new ones are refused until Resume.
func (c *Cluster) Stop() { c.Close() }

// Resume starts the cluster again on the same ports from the same DataDir:
// the topics, their records and the groups' committed offsets are those it
// had when it stopped. It does nothing if the cluster is running, and
// fails the test if the ports cannot be bound again within 10 s.
func (c *Cluster) Resume(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kc != nil {
		return
	}
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for {
		var kc *kfake.Cluster
		if kc, err = c.newKfake(c.o.Ports); err == nil {
			c.kc = kc
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("kafkatest: restarting kfake on %v from %s: %v", c.addrs, c.o.DataDir, err)
}

// Restart stops the cluster and starts it again at once (Stop, then
// Resume): a broker restart as clients see it.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	c.Stop()
	c.Resume(t)
}
