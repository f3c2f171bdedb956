// Command stackready waits until the local test stack is usable and creates
// its test topics. integration/stack.sh runs it after starting the servers:
//
//	stackready -zookeeper 127.0.0.1:2181 -brokers 1 topic:partitions ...
//
// Ready means: every expected broker is registered under /brokers/ids (read
// through kazoo), answers a metadata request through sarama at the address
// it registered, and every listed topic exists with a leader for each
// partition.
//
// The security flags (-zk-tls-ca, -listener SASL_SSL, -sasl-user, ...; see
// -help) make it check the secure mode's TLS ZooKeeper port and SASL_SSL
// listener instead: every connection it opens, to ZooKeeper and to the
// brokers, uses them. With -bootstrap (a cluster in KRaft mode, which
// registers nothing in ZooKeeper) the brokers are found through a metadata
// request to those addresses instead, and ZooKeeper must only answer.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/secflags"
	"github.com/zkgroup/kafka/kazoo"
)

func main() {
	zkAddr := flag.String("zookeeper", "127.0.0.1:2181", "ZooKeeper connection string")
	brokers := flag.Int("brokers", 1, "number of brokers that must be ready")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to wait")
	sec := secflags.Register(flag.CommandLine)
	bootstrap := flag.String("bootstrap", "", "comma-separated broker addresses: read the brokers from Kafka's metadata, not from ZooKeeper (KRaft mode)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("[stackready] ")

	topics, err := parseTopics(flag.Args())
	if err != nil {
		log.Fatal(err)
	}
	deadline := time.Now().Add(*timeout)
	zkConf, err := sec.ZK()
	if err != nil {
		log.Fatal(err)
	}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Metadata.Retry.Max = 0
	if err := sec.Kafka(cfg); err != nil {
		log.Fatal(err)
	}
	var seeds []string
	if *bootstrap != "" {
		seeds = strings.Split(*bootstrap, ",")
	}
	if err := run(*zkAddr, zkConf, cfg, seeds, *brokers, topics, deadline); err != nil {
		log.Fatal(err)
	}
}

type topicSpec struct {
	name       string
	partitions int32
}

func parseTopics(args []string) ([]topicSpec, error) {
	var out []topicSpec
	for _, a := range args {
		name, n, ok := strings.Cut(a, ":")
		p, err := strconv.Atoi(n)
		if !ok || name == "" || err != nil || p < 1 {
			return nil, fmt.Errorf("topic %q: want name:partitions", a)
		}
		out = append(out, topicSpec{name, int32(p)})
	}
	return out, nil
}

// retry calls f every 200 ms until it succeeds or the deadline passes.
func retry(deadline time.Time, what string, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %w", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// run checks the stack. Without bootstrap addresses the brokers are those
// registered in ZooKeeper; with them (KRaft mode), ZooKeeper must only
// answer a read, and the brokers come from Kafka's metadata.
func run(zkAddr string, zkConf *kazoo.Config, cfg *sarama.Config, bootstrap []string, want int, topics []topicSpec, deadline time.Time) error {
	kz, err := kazoo.NewKazooFromConnectionString(zkAddr, zkConf)
	if err != nil {
		return err
	}
	defer kz.Close()

	addrs := bootstrap
	if len(bootstrap) == 0 {
		err = retry(deadline, "brokers registered in ZooKeeper", func() error {
			addrs, err = kz.BrokerList()
			if err == nil && len(addrs) < want {
				err = fmt.Errorf("%d of %d brokers registered", len(addrs), want)
			}
			return err
		})
	} else {
		err = retry(deadline, "ZooKeeper answers", func() error {
			_, err := kz.Consumergroups()
			return err
		})
	}
	if err != nil {
		return err
	}

	var client sarama.Client
	err = retry(deadline, "broker metadata", func() error {
		if client == nil {
			if client, err = sarama.NewClient(addrs, cfg); err != nil {
				return err
			}
		}
		if err := client.RefreshMetadata(); err != nil {
			return err
		}
		if n := len(client.Brokers()); n < want {
			return fmt.Errorf("metadata lists %d of %d brokers", n, want)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer client.Close()

	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return err
	}
	rf := int16(min(want, 3))
	for _, t := range topics {
		err := retry(deadline, "create topic "+t.name, func() error {
			err := admin.CreateTopic(t.name, &sarama.TopicDetail{NumPartitions: t.partitions, ReplicationFactor: rf}, false)
			if errors.Is(err, sarama.ErrTopicAlreadyExists) {
				return nil
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	for _, t := range topics {
		err := retry(deadline, "leaders of "+t.name, func() error {
			if err := client.RefreshMetadata(t.name); err != nil {
				return err
			}
			parts, err := client.Partitions(t.name)
			if err != nil {
				return err
			}
			if int32(len(parts)) < t.partitions {
				return fmt.Errorf("%d of %d partitions", len(parts), t.partitions)
			}
			for _, p := range parts {
				if _, err := client.Leader(t.name, p); err != nil {
					return fmt.Errorf("partition %d: %w", p, err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "[stackready] %d broker(s) at %s answer metadata; %d topic(s) ready\n",
		len(client.Brokers()), strings.Join(addrs, ","), len(topics))
	return nil
}
