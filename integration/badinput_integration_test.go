package integration

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/internal/testenv/leaks"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationBadInput: bad arguments and bad config get a clear error
// that names the argument or field, checked with errors.Is / errors.As, and
// leave no goroutine behind; a topic that does not exist yet is reported on
// Errors() and consumed once it appears.
func TestIntegrationBadInput(t *testing.T) {
	testenv.Integration(t)
	zk := []string{testenv.ZKAddr()}
	topic := newTopic(t, 1)
	topics := []string{topic}

	type badCase struct {
		name      string
		group     string
		topics    []string
		zookeeper []string
		config    func(*consumergroup.Config)
		is        []error  // errors.Is must hold for each
		fields    []string // *ConfigError fields that must be reported, exactly
		mention   []string // substrings the message must contain
		within    time.Duration
	}
	cases := []badCase{
		{name: "empty group name", group: "", topics: topics, zookeeper: zk,
			is: []error{consumergroup.ErrInvalidGroupName}, mention: []string{"group name", "empty"}},
		{name: "group name with a slash", group: "a/b", topics: topics, zookeeper: zk,
			is: []error{consumergroup.ErrInvalidGroupName}, mention: []string{`"a/b"`}},
		{name: "nil topics", group: "g", topics: nil, zookeeper: zk,
			is: []error{consumergroup.ErrNoTopics}, mention: []string{"no topics"}},
		{name: "empty topics", group: "g", topics: []string{}, zookeeper: zk,
			is: []error{consumergroup.ErrNoTopics}, mention: []string{"no topics"}},
		{name: "empty topic name", group: "g", topics: []string{topic, ""}, zookeeper: zk,
			is: []error{consumergroup.ErrInvalidTopic}, mention: []string{"topics[1]", "empty"}},
		{name: "illegal topic characters", group: "g", topics: []string{"bad topic/name"}, zookeeper: zk,
			is: []error{consumergroup.ErrInvalidTopic}, mention: []string{"topics[0]", `"bad topic/name"`}},
		{name: "topic dot-dot", group: "g", topics: []string{".."}, zookeeper: zk,
			is: []error{consumergroup.ErrInvalidTopic}, mention: []string{"topics[0]", `".."`}},
		{name: "topic too long", group: "g", topics: []string{strings.Repeat("x", 250)}, zookeeper: zk,
			is: []error{consumergroup.ErrInvalidTopic}, mention: []string{"topics[0]", "249"}},
		{name: "topic listed twice", group: "g", topics: []string{topic, topic}, zookeeper: zk,
			is: []error{consumergroup.ErrInvalidTopic}, mention: []string{"topics[1]", "more than once"}},
		{name: "nil zookeeper", group: "g", topics: topics, zookeeper: nil,
			is: []error{consumergroup.ErrNoZookeeper}, mention: []string{"zookeeper"}},
		{name: "empty zookeeper address", group: "g", topics: topics, zookeeper: []string{" "},
			is: []error{consumergroup.ErrNoZookeeper}, mention: []string{"zookeeper[0]", "empty"}},
		{name: "every argument bad at once", group: "", topics: []string{"a b"}, zookeeper: nil,
			is:      []error{consumergroup.ErrInvalidGroupName, consumergroup.ErrInvalidTopic, consumergroup.ErrNoZookeeper},
			mention: []string{"group name", `"a b"`, "zookeeper"}},

		{name: "unreachable zookeeper", group: "g", topics: topics, zookeeper: []string{"127.0.0.1:1"},
			config:  func(c *consumergroup.Config) { c.Zookeeper.ConnectTimeout = time.Second },
			mention: []string{"127.0.0.1:1", "ConnectTimeout"}, within: 5 * time.Second},
		{name: "chroot that does not exist", group: "g", topics: topics,
			zookeeper: []string{testenv.ZKAddr() + "/" + testenv.UniqueName("nochroot")},
			is:        []error{kazoo.ErrChrootNotFound}, mention: []string{"/nochroot-"}},

		{name: "ProcessingTimeout 0", group: "g", topics: topics, zookeeper: zk,
			config: func(c *consumergroup.Config) { c.Offsets.ProcessingTimeout = 0 },
			is:     []error{consumergroup.ErrInvalidConfig}, fields: []string{"Offsets.ProcessingTimeout"},
			mention: []string{"Offsets.ProcessingTimeout must be > 0"}},
		{name: "Offsets.Initial 5", group: "g", topics: topics, zookeeper: zk,
			config: func(c *consumergroup.Config) { c.Offsets.Initial = 5 },
			is:     []error{consumergroup.ErrInvalidConfig}, fields: []string{"Offsets.Initial"},
			mention: []string{"Offsets.Initial", "got 5"}},
		{name: "SelfFenceFraction 1.5", group: "g", topics: topics, zookeeper: zk,
			config: func(c *consumergroup.Config) { c.Session.SelfFenceFraction = 1.5 },
			is:     []error{consumergroup.ErrInvalidConfig}, fields: []string{"Session.SelfFenceFraction"},
			mention: []string{"Session.SelfFenceFraction", "got 1.5"}},
		{name: "Claim.Budget below ProcessingTimeout", group: "g", topics: topics, zookeeper: zk,
			config: func(c *consumergroup.Config) {
				c.Offsets.ProcessingTimeout = 5 * time.Second
				c.Claim.Budget = 2 * time.Second
			},
			is: []error{consumergroup.ErrInvalidConfig}, fields: []string{"Claim.Budget"},
			mention: []string{"Claim.Budget must exceed Offsets.ProcessingTimeout (5s), got 2s"}},
		{name: "Zookeeper.Timeout 0", group: "g", topics: topics, zookeeper: zk,
			config: func(c *consumergroup.Config) { c.Zookeeper.Timeout = 0 },
			is:     []error{consumergroup.ErrInvalidConfig}, fields: []string{"Zookeeper"},
			mention: []string{"Zookeeper", "Timeout"}},
		{name: "several fields at once", group: "g", topics: topics, zookeeper: zk,
			config: func(c *consumergroup.Config) {
				c.Offsets.ProcessingTimeout = 0
				c.Offsets.Initial = 5
				c.Session.SelfFenceFraction = 1.5
			},
			is:     []error{consumergroup.ErrInvalidConfig},
			fields: []string{"Offsets.Initial", "Offsets.ProcessingTimeout", "Session.SelfFenceFraction"}},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			cfg := testConfig()
			if tc.config != nil {
				tc.config(cfg)
			}
			start := time.Now()
			cg, err := consumergroup.JoinConsumerGroup(tc.group, tc.topics, tc.zookeeper, cfg)
			took := time.Since(start)
			if err == nil {
				_ = cg.Close()
				t.Fatal("JoinConsumerGroup succeeded, want an error")
			}
			if cg != nil {
				t.Errorf("JoinConsumerGroup returned a group with its error")
			}
			t.Logf("error (after %v): %v", took.Round(time.Millisecond), err)
			for _, want := range tc.is {
				if !errors.Is(err, want) {
					t.Errorf("errors.Is(err, %q) = false", want)
				}
			}
			if len(tc.fields) == 0 && errors.Is(err, consumergroup.ErrInvalidConfig) {
				t.Errorf("an argument or runtime error matches ErrInvalidConfig")
			}
			if got := configErrorFields(err); len(tc.fields) > 0 && strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Errorf("*ConfigError fields %v, want %v", got, tc.fields)
			}
			for _, s := range tc.mention {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message does not mention %q", s)
				}
			}
			if tc.within > 0 && took > tc.within {
				t.Errorf("took %v, want < %v", took, tc.within)
			}
			goleak.VerifyNone(t, append(leaks.Known(), before)...)
		})
	}

	t.Run("missing topic is reported and picked up", func(t *testing.T) {
		missing := testenv.UniqueName("missing")
		group := testenv.UniqueName("g")
		counts := produce(t, topic, 20)

		hTopic := newHistory(t, group, topic, 1)
		hMissing := newHistory(t, group, missing, 3) // created below
		cg := join(t, group, []string{topic, missing}, nil)
		c := collect(cg, 1)
		hTopic.attach(c.ledger)
		hMissing.attach(c.ledger)
		defer func() {
			closeGroup(t, cg)
			<-c.done
		}()

		// The topic that exists flows; the missing one is reported.
		waitFor(t, 30*time.Second, "the existing topic's messages", func() bool { return c.ledger.missing(topic, counts) == 0 })
		waitFor(t, 30*time.Second, "an error for the missing topic", func() bool {
			for _, err := range c.errors() {
				var pe *consumergroup.PartitionError
				if errors.As(err, &pe) && pe.Topic == missing && pe.Partition == -1 &&
					strings.Contains(err.Error(), "does not exist") {
					return true
				}
			}
			return false
		})

		testenv.CreateTopic(t, missing, 3)
		created := time.Now()
		mcounts := produce(t, missing, 300)
		waitFor(t, 60*time.Second, "the new topic's messages", func() bool { return c.ledger.missing(missing, mcounts) == 0 })
		t.Logf("topic created, then all 300 of its messages delivered %v later", time.Since(created).Round(time.Millisecond))
		for _, err := range c.errors() {
			t.Logf("reported: %v", err)
		}
		hTopic.assert(expectation{produced: counts})
		hMissing.assert(expectation{produced: mcounts})
	})

	t.Run("corrupt stored offset", func(t *testing.T) {
		// An operator (or a broken tool) writes a non-decimal offset. The
		// group reports it naming the znode and holds the partition: it
		// never consumes from a guessed position. Once the offset is
		// repaired, consumption resumes exactly there.
		topic := newTopic(t, 1)
		produce(t, topic, 20)
		group := testenv.UniqueName("g")
		kz := zkClient(t)
		if err := kz.Consumergroup(group).CommitOffset(topic, 0, 5); err != nil {
			t.Fatal(err)
		}
		path := "/consumers/" + group + "/offsets/" + topic + "/0"
		zkCliSet(t, path, "abc")

		cfg := testConfig()
		cfg.Claim.RetryCooldown = 300 * time.Millisecond
		h := newHistory(t, group, topic, 1)
		cg := join(t, group, []string{topic}, cfg)
		c := collect(cg, 1)
		h.attach(c.ledger)
		defer func() {
			closeGroup(t, cg)
			<-c.done
		}()
		waitFor(t, 30*time.Second, "the corrupt offset to be reported", func() bool {
			for _, err := range c.errors() {
				if errors.Is(err, kazoo.ErrMalformed) && strings.Contains(err.Error(), path) {
					return true
				}
			}
			return false
		})
		time.Sleep(time.Second)
		if n := c.ledger.distinct(); n != 0 {
			t.Fatalf("%d messages delivered from a corrupt offset", n)
		}

		if err := kz.Consumergroup(group).CommitOffset(topic, 0, 5); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "the 15 messages after the repaired offset", func() bool { return c.ledger.distinct() >= 15 })
		c.ledger.mu.Lock()
		first := c.ledger.all[0].offset
		c.ledger.mu.Unlock()
		if first != 5 {
			t.Errorf("after the repair, consumption started at %d, want 5", first)
		}
		h.assert(expectation{produced: map[int32]int64{0: 20}, from: map[int32]int64{0: 5}})
	})
}

// zkCliSet writes value into the znode at path with ZooKeeper's own command
// line client (from the stack's jars), as an operator would: the library
// offers no way to store a non-decimal offset.
func zkCliSet(t testing.TB, path, value string) {
	t.Helper()
	zkCli(t, "set", path, value)
}

// zkCli runs one command of ZooKeeper's command line client against the
// stack, with the jars stack.sh fetched.
func zkCli(t testing.TB, args ...string) {
	t.Helper()
	lib := os.Getenv("STACK_CACHE")
	if lib == "" {
		lib = filepath.Join("..", "integration", ".cache")
	}
	cmd := exec.Command("java", append([]string{"-cp", filepath.Join(lib, "lib", "*"),
		"org.apache.zookeeper.ZooKeeperMain", "-server", testenv.ZKAddr()}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zkCli %v: %v\n%s", args, err, out)
	}
}

// configErrorFields returns the sorted Field of every *ConfigError in err's
// tree.
func configErrorFields(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if ce, ok := e.(*consumergroup.ConfigError); ok {
			out = append(out, ce.Field)
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	slices.Sort(out)
	return out
}

// collector reads a group's messages (marking each) into a ledger, as
// delivered to consumer id, and keeps its errors, until Close closes both
// channels.
type collector struct {
	ledger *ledger
	done   <-chan struct{}
	mu     sync.Mutex
	errs   []error
}

func collect(cg *consumergroup.ConsumerGroup, id int) *collector {
	c := &collector{ledger: newLedger()}
	c.done = readGroup(cg, id, c.ledger, 0, func(err error) {
		c.mu.Lock()
		c.errs = append(c.errs, err)
		c.mu.Unlock()
	})
	return c
}

// errors returns the errors reported so far.
func (c *collector) errors() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.errs...)
}
