// Command handler consumes topics as one member of a ZooKeeper-coordinated
// consumer group through a sarama-style handler: the same
// sarama.ConsumerGroupHandler (Setup, Cleanup, ConsumeClaim) a program
// written for sarama.NewConsumerGroup uses, run by
// consumergroup.NewConsumerGroup. Only the constructor differs; the
// handler and the Consume loop are sarama's.
//
//	go run ./examples/handler -zookeeper 127.0.0.1:2181 -group demo -topics zkgroup.test.four
//
// Start several copies with the same -group: each rebalance closes the
// channels of the claims that move (the handler logs it) while the others
// keep running. It stops on SIGINT or SIGTERM; every message it printed is
// marked, and the last marks are committed before it exits, within 25 s
// (under the 30 s a Kubernetes pod is given: see docs/shutdown.md).
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/kazoo"
)

var (
	zookeeperFlag = flag.String("zookeeper", "127.0.0.1:2181", "ZooKeeper connection string: comma-separated host:port list with an optional /chroot suffix")
	groupFlag     = flag.String("group", "zkgroup.example.handler", "name of the consumer group")
	topicsFlag    = flag.String("topics", "zkgroup.test.four", "comma-separated list of topics to consume")
)

func main() {
	flag.Parse()
	config := consumergroup.NewConfig()
	config.Offsets.Initial = sarama.OffsetOldest
	var zookeeper []string
	zookeeper, config.Zookeeper.Chroot = kazoo.ParseConnectionString(*zookeeperFlag)
	topics := strings.Split(*topicsFlag, ",")

	// The one line that differs from a sarama program:
	// sarama.NewConsumerGroup(brokers, group, saramaConfig). The group is a
	// sarama.ConsumerGroup, with CloseContext besides.
	group, err := consumergroup.NewConsumerGroup(*groupFlag, zookeeper, config)
	if err != nil {
		log.Fatalln("new consumer group:", err)
	}
	go func() {
		for err := range group.Errors() {
			log.Println("error:", err)
		}
	}()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// The signal ends the session (Consume's context); CloseContext, run
	// beside it, bounds how long its drain, commits and release may take:
	// a pod's grace period (30 s) less a margin.
	closed := make(chan error, 1)
	go func() {
		<-ctx.Done()
		closeCtx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		defer cancel()
		closed <- group.CloseContext(closeCtx)
	}()
	handler := &printer{}
	for {
		// One session per call; rebalances do not end it (see
		// consumergroup.HandlerGroup.Consume), so the loop only runs again
		// after a session ended for another reason.
		if err := group.Consume(ctx, topics, handler); err != nil {
			log.Println("consume:", err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err := <-closed; err != nil {
		log.Println("close:", err)
		os.Exit(1)
	}
}

// printer prints and marks every message. It is a plain
// sarama.ConsumerGroupHandler: nothing in it knows which group runs it.
type printer struct{}

// Setup logs the member and its claims (none yet: claims start as their
// previous owners let go of them).
func (printer) Setup(s sarama.ConsumerGroupSession) error {
	log.Printf("session up: member %s", s.MemberID())
	return nil
}

// Cleanup logs the end of the session.
func (printer) Cleanup(s sarama.ConsumerGroupSession) error {
	log.Printf("session over: member %s", s.MemberID())
	return nil
}

// ConsumeClaim prints and marks each message of one partition until its
// channel closes (the partition moved) or the session ends.
func (printer) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	log.Printf("claim %s/%d from offset %d", c.Topic(), c.Partition(), c.InitialOffset())
	for {
		select {
		case m, ok := <-c.Messages():
			if !ok {
				log.Printf("claim %s/%d ended: the partition moved", c.Topic(), c.Partition())
				return nil
			}
			log.Printf("%s/%d@%d: value=%q", m.Topic, m.Partition, m.Offset, m.Value)
			s.MarkMessage(m, "")
		case <-s.Context().Done():
			return nil
		}
	}
}
