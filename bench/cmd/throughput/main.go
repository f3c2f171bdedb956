// Command throughput reads one topic with nine readers, ours, sarama's and
// franz-go's, side by side, and prints each reader's rate and peak RSS
// round by round.
//
// It creates a fresh topic of 4 partitions and fills it with -n messages
// ("message <i>", uncompressed, each partition a quarter) once, written by
// sarama's producer 5,000 at a time as integration/cmd/memcase writes its
// topics (-producer franz: by franz-go's, batching as it does by default;
// the log's record batches weigh on every reader's rate and memory),
// then runs -rounds interleaved rounds, the readers' order rotating by
// one each round. Each reader runs in a child process of its own (this program
// re-executed with -child), so its peak RSS (getrusage's ru_maxrss of the
// child) is its own. Each reader starts from the oldest offset under a
// fresh group name and stops once it read every message; its time runs
// from creating its client to the end of its Close (join, claims, final
// commit and leaving included), the child's start-up excluded.
//
// The readers:
//
//   - handler: consumergroup.NewConsumerGroup, Consume with a handler
//     calling MarkMessage on every message, Close;
//   - messages: consumergroup.JoinConsumerGroup, Messages() read by one
//     goroutine, CommitUpto on every message, Close;
//   - messages-buffered: the same with Messages.Buffer 256, as deep as
//     franz-direct-conv's channel;
//   - sarama-group: sarama.NewConsumerGroup with the same handler as ours;
//   - sarama-one-reader: bare sarama PartitionConsumers, their Messages()
//     merged into one channel read by one goroutine; nothing committed;
//   - franz-group: kgo.ConsumerGroup with AutoCommitMarks, PollFetches,
//     MarkCommitRecords on every record, Close (which commits the marks);
//   - franz-direct-conv: kgo.ConsumePartitions (no group), each record
//     converted to a *sarama.ConsumerMessage (headers included) and sent
//     through one channel (256 deep, sarama's ChannelBufferSize) read by
//     one goroutine: the limit for a channel API;
//   - franz-direct-unbuf: the same with an unbuffered channel, so that a
//     message is handed over only when the reader takes it, as our
//     Messages() hands it over (nothing waits in a buffer past the fence):
//     the limit for a channel API with that guarantee (no target; a
//     comparison);
//   - franz-direct-raw: kgo.ConsumePartitions, records counted as polled.
//
// Settings, as BenchmarkIntegrationThroughput has them: fetch sizes are
// each library's defaults. The maximum fetch wait is 100 ms for every
// reader (sarama's default 500 ms, franz-go's 5 s otherwise), except the
// sarama one-reader (500 ms, as in the benchmark); it only matters once a
// partition is read to its end. Our groups commit every 100 ms
// (Offsets.CommitInterval) and use ProcessingTimeout 5 s; sarama's group
// autocommits every second and franz-go's every 5 s, their defaults.
// Nothing sleeps.
//
// KAFKA_ADDRS (comma-separated) and ZK_ADDR name the stack. Run from bench/:
//
//	go run ./cmd/throughput -n 1000000 -rounds 3
//
// The figures move with the machine's load: compare readers within a run,
// and prefer best-of-rounds ratios. -cpuprofile DIR writes each reader's
// CPU profile of each round (its read, from client to Close) to
// DIR/<reader>-<round>.pprof, for go tool pprof.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zkgroup/kafka/bench/internal/benchstack"
)

func main() {
	n := flag.Int("n", 1_000_000, "messages to produce (and read by every reader)")
	rounds := flag.Int("rounds", 3, "interleaved rounds, the readers' order rotating each round")
	only := flag.String("readers", "", "comma-separated readers to run (default all): "+strings.Join(readerNames(), ", "))
	timeout := flag.Duration("timeout", 5*time.Minute, "longest a reader may take")
	child := flag.String("child", "", "run this one reader in this process and print its result (used by the re-executed child)")
	topic := flag.String("topic", "", "the topic (with -child)")
	conns := flag.Bool("conns", false, "count each group's TCP connections per broker (ours, sarama's, franz-go's; busy, then idle) instead of timing the readers")
	connsIdle := flag.Duration("conns-idle", 70*time.Second, "with -conns: the last count's time after the last message")
	producer := flag.String("producer", "sarama", "who writes the topic, sarama (5,000 messages per SendMessages) or franz (kgo, default batching): it decides the log's batch sizes")
	cpuProfile := flag.String("cpuprofile", "", "write each reader's CPU profile of each round to this directory (<reader>-<round>.pprof); with -child, the file")
	flag.Parse()

	st := benchstack.FromEnv()
	if *child != "" {
		runIt := func() error { return runChild(st, *child, *topic, *n, *timeout, *cpuProfile) }
		if *conns {
			runIt = func() error { return countConnsChild(st, *child, *topic, *n, *connsIdle, *timeout) }
		}
		if err := runIt(); err != nil {
			fmt.Fprintf(os.Stderr, "throughput: reader %s: %v\n", *child, err)
			os.Exit(1)
		}
		return
	}
	names := readerNames()
	if *only != "" {
		names = strings.Split(*only, ",")
		for _, name := range names {
			if _, ok := readers[name]; !ok {
				fmt.Fprintf(os.Stderr, "throughput: unknown reader %q (have %s)\n", name, strings.Join(readerNames(), ", "))
				os.Exit(2)
			}
		}
	}
	if *conns {
		if *only == "" {
			names = []string{"handler", "sarama-group", "franz-group"}
		}
		if err := runConns(st, *n, names, *producer, *connsIdle, *timeout); err != nil {
			fmt.Fprintln(os.Stderr, "throughput:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(st, *n, *rounds, names, *producer, *timeout, *cpuProfile); err != nil {
		fmt.Fprintln(os.Stderr, "throughput:", err)
		os.Exit(1)
	}
}

// run produces the topic, runs the rounds and prints the table. With
// profiles set, each reader writes its CPU profile of each round there.
func run(st benchstack.Stack, n, rounds int, names []string, producer string, timeout time.Duration, profiles string) error {
	if profiles != "" {
		if err := os.MkdirAll(profiles, 0o755); err != nil {
			return err
		}
	}
	topic := fmt.Sprintf("zkgroup.bench.franz.%d", time.Now().UnixNano())
	defer benchstack.DeleteTopic(st.Brokers, topic) // runs leave no log of -n messages behind
	t0 := time.Now()
	total, err := produce(st.Brokers, topic, n, producer)
	if err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	fmt.Printf("topic %s: %d messages on 4 partitions, produced by %s in %v\n", topic, total, producer, time.Since(t0).Round(time.Millisecond))
	results := make(map[string][]result, len(names))
	for r := range rounds {
		for j := range names {
			name := names[(r+j)%len(names)]
			var profile string
			if profiles != "" {
				profile = filepath.Join(profiles, fmt.Sprintf("%s-%d.pprof", name, r+1))
			}
			res, err := runReader(st, name, topic, total, timeout, profile)
			if err != nil {
				return fmt.Errorf("round %d: %w", r+1, err)
			}
			fmt.Fprintf(os.Stderr, "round %d %-18s %6.2f M msgs/s  %4.0f MB  %5.2f s CPU\n", r+1, name, res.rate(total)/1e6, res.peakMB(), res.cpu.Seconds())
			results[name] = append(results[name], res)
		}
	}
	printTable(os.Stdout, names, results, total)
	return nil
}
