// Command producer writes a few numbered test messages to a topic, spread
// over its partitions, so the consumer examples have something to read:
//
//	go run ./examples/producer -topic zkgroup.test.four -n 10
//
// The brokers are found in ZooKeeper (/brokers/ids), as the consumers find
// them. It prints where each message landed. The security flags (see
// -help: TLS to ZooKeeper, -listener SASL_SSL, TLS and SASL/SCRAM to Kafka)
// apply to every connection it opens; -verbose logs sarama's activity to
// standard error.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/secflags"
	"github.com/zkgroup/kafka/kazoo"
)

func main() {
	zookeeper := flag.String("zookeeper", "127.0.0.1:2181", "ZooKeeper connection string (`host:port,...[/chroot]`)")
	topic := flag.String("topic", "zkgroup.test.four", "topic to write to")
	n := flag.Int("n", 10, "number of messages")
	prefix := flag.String("prefix", "message", "message values are \"<prefix> <i> <time>\"")
	sec := secflags.Register(flag.CommandLine)
	verbose := flag.Bool("verbose", false, "log sarama's activity to standard error")
	flag.Parse()
	if *verbose {
		sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags)
	}
	if err := run(*zookeeper, *topic, *n, *prefix, sec); err != nil {
		fmt.Fprintln(os.Stderr, "producer:", err)
		os.Exit(1)
	}
}

func run(zookeeper, topic string, n int, prefix string, sec *secflags.Flags) error {
	zkConf, err := sec.ZK()
	if err != nil {
		return err
	}
	kz, err := kazoo.NewKazooFromConnectionString(zookeeper, zkConf)
	if err != nil {
		return err
	}
	brokers, err := kz.BrokerList()
	kz.Close()
	if err != nil {
		return fmt.Errorf("list brokers: %w", err)
	}

	config := sarama.NewConfig()
	config.Producer.Return.Successes = true
	config.Producer.RequiredAcks = sarama.WaitForAll
	config.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	if err := sec.Kafka(config); err != nil {
		return err
	}
	producer, err := sarama.NewSyncProducer(brokers, config)
	if err != nil {
		return fmt.Errorf("connect to Kafka at %v: %w", brokers, err)
	}
	defer producer.Close()

	now := time.Now().Format(time.RFC3339)
	for i := range n {
		msg := &sarama.ProducerMessage{
			Topic: topic,
			Key:   sarama.StringEncoder(fmt.Sprint(i)),
			Value: sarama.StringEncoder(fmt.Sprintf("%s %d %s", prefix, i, now)),
		}
		partition, offset, err := producer.SendMessage(msg)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		fmt.Printf("%s/%d offset=%d\n", topic, partition, offset)
	}
	return nil
}
