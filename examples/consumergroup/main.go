// Command consumergroup consumes topics as one member of a ZooKeeper-coordinated
// consumer group, printing a line per message and a summary when it stops.
//
// It is written against the API that github.com/wvanbergen/kafka/consumergroup
// and github.com/wvanbergen/kazoo-go already had, so it doubles as the proof
// that a program written for them compiles here after changing the import
// paths. Start several copies with the same -group to watch partitions move
// between them.
//
//	go run ./examples/consumergroup -zookeeper 127.0.0.1:2181 -group demo -topics zkgroup.test.four
//
// -verbose logs sarama's activity to standard error.
//
// It stops on SIGINT or SIGTERM, after -max messages, or after -timeout;
// every message it printed is marked with CommitUpto, and Close commits the
// marks before the program exits. The exit status is 1 if the group could
// not be joined or closed, or if -max was set and not reached.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/kazoo"
)

const (
	defaultZookeeper = "127.0.0.1:2181"
	defaultGroup     = "zkgroup.example.consumergroup"
	defaultTopics    = "zkgroup.test.four"
)

var (
	zookeeperFlag = flag.String("zookeeper", defaultZookeeper, "ZooKeeper connection string: comma-separated host:port list with an optional /chroot suffix (e.g. `zk1:2181,zk2:2181/kafka`)")
	groupFlag     = flag.String("group", defaultGroup, "name of the consumer group; instances with the same name share the partitions")
	topicsFlag    = flag.String("topics", defaultTopics, "comma-separated list of topics to consume")
	initialFlag   = flag.String("initial", "oldest", "where a partition without a committed offset starts: oldest or newest")
	maxFlag       = flag.Int("max", 0, "stop after this many messages (0: no limit)")
	timeoutFlag   = flag.Duration("timeout", 0, "stop this long after joining the group (0: no limit)")
	sleepFlag     = flag.Duration("sleep", 0, "simulated processing time per message")
	verboseFlag   = flag.Bool("verbose", false, "log sarama's activity to standard error")
)

func main() {
	flag.Parse()
	log.SetFlags(log.LstdFlags)
	if *verboseFlag {
		sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags)
	}

	config := consumergroup.NewConfig()
	switch *initialFlag {
	case "oldest":
		config.Offsets.Initial = sarama.OffsetOldest
	case "newest":
		config.Offsets.Initial = sarama.OffsetNewest
	default:
		log.Fatalf("-initial must be oldest or newest, got %q", *initialFlag)
	}
	config.Offsets.ProcessingTimeout = 10 * time.Second

	var zookeeperNodes []string
	zookeeperNodes, config.Zookeeper.Chroot = kazoo.ParseConnectionString(*zookeeperFlag)
	topics := splitList(*topicsFlag)
	if len(zookeeperNodes) == 0 || len(topics) == 0 {
		flag.Usage()
		os.Exit(2)
	}

	consumer, err := consumergroup.JoinConsumerGroup(*groupFlag, topics, zookeeperNodes, config)
	if err != nil {
		log.Fatalln("join consumer group:", err)
	}
	log.Printf("joined group %s on %s, consuming %s", *groupFlag, *zookeeperFlag, strings.Join(topics, ","))

	// stop closes the group once, whoever asks first: a signal, the timeout,
	// or the message loop after -max messages. Close makes Messages() end,
	// which ends the loop below.
	var (
		stopOnce sync.Once
		closeErr error
		closed   = make(chan struct{})
	)
	stop := func(why string) {
		stopOnce.Do(func() {
			log.Printf("stopping: %s", why)
			closeErr = consumer.Close()
			close(closed)
		})
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		if sig, ok := <-signals; ok {
			stop("received " + sig.String())
		}
	}()
	if *timeoutFlag > 0 {
		timer := time.AfterFunc(*timeoutFlag, func() { stop(fmt.Sprintf("timeout of %s reached", *timeoutFlag)) })
		defer timer.Stop()
	}

	go func() {
		for err := range consumer.Errors() {
			log.Println("consumer group error:", err)
		}
	}()

	count := 0
	next := make(map[string]map[int32]int64) // next expected offset per topic and partition
	for message := range consumer.Messages() {
		count++
		fmt.Printf("%s/%d offset=%d key=%q value=%q\n",
			message.Topic, message.Partition, message.Offset, message.Key, message.Value)

		if next[message.Topic] == nil {
			next[message.Topic] = make(map[int32]int64)
		}
		if want, seen := next[message.Topic][message.Partition]; seen && message.Offset != want {
			log.Printf("%s/%d: expected offset %d, got %d", message.Topic, message.Partition, want, message.Offset)
		}
		next[message.Topic][message.Partition] = message.Offset + 1

		time.Sleep(*sleepFlag) // stands in for the real work

		consumer.CommitUpto(message)
		if *maxFlag > 0 && count >= *maxFlag {
			stop(fmt.Sprintf("processed %d messages (-max)", count))
			break
		}
	}
	stop("message channel closed")
	<-closed
	signal.Stop(signals)

	fmt.Printf("processed %d messages\n", count)
	for _, topic := range sortedKeys(next) {
		partitions := next[topic]
		ids := make([]int32, 0, len(partitions))
		for p := range partitions {
			ids = append(ids, p)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, p := range ids {
			fmt.Printf("  %s/%d next offset %d\n", topic, p, partitions[p])
		}
	}

	if closeErr != nil {
		log.Fatalln("close consumer group:", closeErr)
	}
	if *maxFlag > 0 && count < *maxFlag {
		log.Fatalf("stopped after %d of %d messages (-max)", count, *maxFlag)
	}
}

// splitList splits a comma-separated flag value, dropping empty entries.
func splitList(csv string) []string {
	var out []string
	for _, s := range strings.Split(csv, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
