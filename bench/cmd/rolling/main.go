// Command rolling measures a rolling deploy of a consumer group: ours
// with static members (Consumer.Group.InstanceId, docs/static-members.md),
// ours with today's dynamic ids, sarama's Kafka-coordinated group and
// franz-go's, each static on a cooperative-sticky balancer, on the same
// stack in one run, and prints one row per group.
//
// For each group, on a fresh topic of -partitions partitions and a fresh
// group name, it starts -instances instances (all in this process, each
// with clients of its own), waits for a stable assignment, starts a
// producer (franz-go, acks=all, -rate messages/s spread evenly over the
// partitions, every acknowledged offset recorded), produces for -warm,
// then restarts the instances one after the other: each is closed, stays
// away -away, starts again, and the next is closed only once the group is
// stable again. After the last, it produces for -warm more, stops the
// producer, waits until every acknowledged offset was delivered (at most
// -drain), closes the instances and deletes the topic.
//
// A group is stable when every partition is held by exactly one running
// instance, each holds its even share (partitions/instances, or one more),
// and that assignment stays the same for -stable. Who holds what is what
// the instances' own callbacks say: a ConsumeClaim running (ours and
// sarama's), OnPartitionsAssigned up to OnPartitionsRevoked or Lost
// (franz-go). The deploy runs from the first Close to the moment the
// group was stable after the last start.
//
// The columns:
//
//   - moved: partitions delivered, from the deploy's start on, by an
//     instance other than the one that held them before it (each counted
//     once): 0 when every partition stays with its instance across its
//     restart;
//   - waited p50 / p99 / max: for each partition, the longest time over
//     the deploy in which it had a message acknowledged to the producer
//     and not delivered yet (from the first such message's
//     acknowledgement to the delivery that emptied its backlog), as
//     percentiles over the partitions. Nothing waits when nothing is
//     produced, so the producer's own pauses do not count, which the gaps
//     between consecutive deliveries would (on a loaded machine the
//     producer pauses for seconds in all); the floor is the delivery's
//     latency, a few ms;
//   - duplicates: offsets delivered more than once (over the whole run);
//   - all stalled: the time within the deploy, in 10 ms slices, in which
//     no partition delivered anything while more than half of them had a
//     message waiting, counted in runs of at least -stall (100 ms): the
//     whole group stopped (an eager rebalance), neither a pause of the
//     producer (nothing waits), nor one absent instance's share, nor the
//     tens of ms in which a loaded machine runs none of the consumers;
//   - lost: acknowledged offsets never delivered, after the drain (must be 0);
//   - deploy: the deploy's length;
//   - producer stalled: the sum of the producer's gaps between consecutive
//     acknowledgements longer than -stall (100 ms; at 600 messages/s one
//     arrives every 2 ms or so) over the deploy, how much the machine's
//     load held the producer back.
//
// The groups (-groups, comma-separated):
//
//   - ours-static: consumergroup.NewConsumerGroup (the handler API), each
//     instance's Consumer.Group.InstanceId "i0".."i<N-1>", the default
//     Static.GraceWindow (30 s) and assignment (sticky);
//   - ours-dynamic: the same without an InstanceId (a fresh id each start);
//   - sarama-static: sarama.NewConsumerGroup with Consumer.Group.InstanceId
//     and BalanceStrategyCooperativeSticky (sarama's cooperative protocol);
//     session timeout 10 s, sarama's default;
//   - franz-static: kgo's group consumer with kgo.InstanceID and
//     kgo.CooperativeStickyBalancer, AutoCommitMarks, the marks committed
//     on revoke and before Close; session timeout 45 s, franz-go's default.
//
// Every handler records and marks each message. Our groups commit every
// 100 ms and wait 100 ms at most per fetch (as cmd/throughput has them);
// the others wait 100 ms per fetch and commit at their defaults. Kafka's
// group coordinator runs with the broker's settings: the program prints
// its group.initial.rebalance.delay.ms.
//
// -case never-returns runs ours-static only, with Static.GraceWindow
// -grace: once the group is stable and the producer has run for -warm,
// the last instance closes and never returns; it prints the time from the
// start of that Close to the first delivery by another instance of the
// last of its partitions (the window plus the time to claim; expected
// within -grace + 1 s, reported, not asserted).
//
// Run from bench/ (ZK_ADDR and KAFKA_ADDRS name the stack):
//
//	go run ./cmd/rolling
//	go run ./cmd/rolling -case never-returns -grace 5s
//
// -rounds N runs every group N times, the groups' order rotating by one
// each round, and prints each round's rows, then one row per group: the
// most moved, duplicated and lost of its rounds, the median of the rest.
// -out FILE also writes the figures as JSON.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zkgroup/kafka/bench/internal/benchstack"
)

func main() {
	var opts options
	st := benchstack.FromEnv()
	brokers := flag.String("brokers", strings.Join(st.Brokers, ","), "Kafka brokers, comma-separated")
	zk := flag.String("zk", st.ZK, "ZooKeeper server")
	flag.IntVar(&opts.instances, "instances", 6, "instances per group")
	flag.IntVar(&opts.partitions, "partitions", 60, "partitions of each group's topic")
	flag.DurationVar(&opts.away, "away", 3*time.Second, "how long a restarted instance stays away")
	flag.IntVar(&opts.rate, "rate", 600, "messages produced per second, over every partition")
	flag.DurationVar(&opts.warm, "warm", 3*time.Second, "producing before the deploy and after it")
	flag.DurationVar(&opts.stable, "stable", time.Second, "how long a balanced assignment must stay to count as stable")
	flag.DurationVar(&opts.settleMax, "settle-max", 2*time.Minute, "longest wait for a stable group")
	flag.DurationVar(&opts.drain, "drain", time.Minute, "longest wait for every acknowledged message after the producer stopped")
	flag.DurationVar(&opts.stall, "stall", 100*time.Millisecond, "the shortest run of stalled slices that counts as the group's stall, and the shortest gap between the producer's acknowledgements that counts as its")
	flag.DurationVar(&opts.grace, "grace", 5*time.Second, "-case never-returns: ours' Static.GraceWindow")
	groups := flag.String("groups", strings.Join(kindNames(), ","), "groups to run, comma-separated: "+strings.Join(kindNames(), ", "))
	which := flag.String("case", "rolling", "rolling, or never-returns (ours-static only)")
	rounds := flag.Int("rounds", 1, "rounds of every group, the groups' order rotating by one each round")
	out := flag.String("out", "", "also write the figures as JSON to this file")
	flag.Parse()
	opts.st = benchstack.Stack{ZK: *zk, Brokers: strings.Split(*brokers, ",")}
	if err := run(opts, *which, strings.Split(*groups, ","), *rounds, *out); err != nil {
		fmt.Fprintln(os.Stderr, "rolling:", err)
		os.Exit(1)
	}
}

// report is what -out writes.
type report struct {
	Case         string        `json:"case"`
	Instances    int           `json:"instances"`
	Partitions   int           `json:"partitions"`
	Away         time.Duration `json:"away_ns"`
	Rate         int           `json:"rate"`
	Rows         []row         `json:"rows,omitempty"`   // one per group, over the rounds
	Rounds       []row         `json:"rounds,omitempty"` // one per group and round, in the order they ran
	NeverReturns *neverReturns `json:"never_returns,omitempty"`
}

func run(opts options, which string, groups []string, rounds int, out string) error {
	for _, k := range groups {
		if _, ok := kinds[k]; !ok {
			return fmt.Errorf("unknown group %q (have %s)", k, strings.Join(kindNames(), ", "))
		}
	}
	if opts.instances < 1 || opts.partitions < opts.instances || opts.rate < 1 || rounds < 1 {
		return fmt.Errorf("need -instances >= 1, -partitions >= -instances, -rate >= 1 and -rounds >= 1")
	}
	rep := report{Case: which, Instances: opts.instances, Partitions: opts.partitions, Away: opts.away, Rate: opts.rate}
	delay := groupRebalanceDelay(opts.st.Brokers)
	fmt.Printf("%d instances (one process), %d partitions, away %v, %d msgs/s; broker group.initial.rebalance.delay.ms: %s\n",
		opts.instances, opts.partitions, opts.away, opts.rate, delay)
	switch which {
	case "rolling":
		for round := range rounds {
			for j := range groups {
				k := groups[(round+j)%len(groups)]
				r, err := runRolling(k, opts)
				if err != nil {
					return err
				}
				r.Round = round + 1
				rep.Rounds = append(rep.Rounds, r)
			}
		}
		if rounds > 1 {
			fmt.Println("each round:")
			printTable(os.Stdout, rep.Rounds)
			fmt.Printf("over %d rounds (moved, duplicates, lost: the most of a round; the rest: medians):\n", rounds)
		}
		rep.Rows = combine(rep.Rounds, groups)
		printTable(os.Stdout, rep.Rows)
	case "never-returns":
		res, err := runNeverReturns(opts)
		if err != nil {
			return err
		}
		rep.NeverReturns = &res
		fmt.Printf("ours-static, grace window %v: the leaver's %d partitions delivered by the others %v after its Close began (its Close took %v; window + 1 s = %v); %d delivered by others within the window, %d lost, %d duplicates\n",
			res.Grace, res.Partitions, res.Taken.Round(time.Millisecond), res.Close.Round(time.Millisecond), res.Grace+time.Second, res.Early, res.Lost, res.Dups)
	default:
		return fmt.Errorf("unknown -case %q (rolling, never-returns)", which)
	}
	if out == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}
