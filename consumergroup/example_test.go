package consumergroup_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/kazoo"
)

// Join a group, consume until interrupted, and leave. Every instance
// started with the same group name shares the topic's partitions; each
// message is marked with CommitUpto once processed, and Close commits the
// marks before it returns.
func ExampleJoinConsumerGroup() {
	config := consumergroup.NewConfig()
	config.Offsets.Initial = sarama.OffsetOldest
	config.Offsets.ProcessingTimeout = 10 * time.Second

	zookeeper, chroot := kazoo.ParseConnectionString("127.0.0.1:2181")
	config.Zookeeper.Chroot = chroot
	group, err := consumergroup.JoinConsumerGroup("my-group", []string{"my-topic"}, zookeeper, config)
	if err != nil {
		log.Fatalln("join:", err) // a *ConfigError, or ZooKeeper or Kafka out of reach
	}

	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt)
	go func() {
		<-interrupted
		if err := group.Close(); err != nil { // ends Messages(), which ends the loop below
			log.Println("close:", err)
		}
	}()
	go func() {
		for err := range group.Errors() {
			log.Println("group:", err)
		}
	}()

	for msg := range group.Messages() {
		fmt.Printf("%s/%d@%d: %s\n", msg.Topic, msg.Partition, msg.Offset, msg.Value)
		group.CommitUpto(msg)
	}
}

// Mark a message only once it is processed: CommitUpto(msg) says that msg
// and every earlier message of its partition are done. Offsets are
// committed every Offsets.CommitInterval, on FlushOffsets, and when a
// partition moves away or the group closes; a message delivered but not
// marked is delivered again to whoever owns its partition next (at least
// once).
func ExampleConsumerGroup_CommitUpto() {
	config := consumergroup.NewConfig()
	config.Offsets.CommitInterval = time.Second
	group, err := consumergroup.JoinConsumerGroup("my-group", []string{"my-topic"}, []string{"127.0.0.1:2181"}, config)
	if err != nil {
		log.Fatalln(err)
	}
	defer group.Close()

	process := func(*sarama.ConsumerMessage) error { return nil } // your work
	for msg := range group.Messages() {
		if err := process(msg); err != nil {
			// Not marked: after a restart or a rebalance it comes again.
			log.Printf("%s/%d@%d: %v", msg.Topic, msg.Partition, msg.Offset, err)
			continue
		}
		group.CommitUpto(msg)
	}
}

// Everything on Errors() is a *PartitionError naming the topic and the
// partition; errors.Is and errors.As on it tell the cause. The group has
// already done what each cause needs (see the README's Errors table); the
// application decides what to log or alert on. This example feeds handle
// one error of each kind, as the group would report them.
func ExampleConsumerGroup_Errors() {
	handle := func(err error) {
		var (
			pe       *consumergroup.PartitionError
			conflict *consumergroup.OffsetConflictError
			claimErr *claim.Error
		)
		where := "?"
		if errors.As(err, &pe) {
			where = fmt.Sprintf("%s/%d", pe.Topic, pe.Partition)
		}
		switch {
		case errors.Is(err, kazoo.ErrClaimLost):
			fmt.Println(where, "claim lost: delivery stopped; unmarked messages come again")
		case errors.As(err, &conflict):
			fmt.Println(where, "offset changed underneath: resumed at", conflict.Stored)
		case errors.As(err, &claimErr):
			fmt.Println(where, "not claimed after", claimErr.Attempts, "attempts: look at the owner")
		case errors.Is(err, kazoo.ErrMalformed):
			fmt.Println(where, "malformed znode: repair it")
		case kazoo.IsRetryable(err):
			fmt.Println(where, "ZooKeeper did not answer: retried")
		default:
			fmt.Println(where, "other:", err)
		}
	}

	partitionError := func(partition int32, err error) error {
		return &consumergroup.PartitionError{Topic: "my-topic", Partition: partition, Err: err}
	}
	handle(partitionError(0, fmt.Errorf("commit: %w", kazoo.ErrClaimLost)))
	handle(partitionError(1, &consumergroup.OffsetConflictError{Topic: "my-topic", Partition: 1, Pending: 120, Stored: 0, Err: kazoo.ErrOffsetConflict}))
	handle(partitionError(2, &claim.Error{Topic: "my-topic", Partition: 2, Attempts: 61, Elapsed: 70 * time.Second, Cause: kazoo.ErrPartitionClaimedByOther}))
	handle(partitionError(3, &kazoo.ZnodeError{Op: "parse", Path: "/consumers/my-group/offsets/my-topic/3", Err: kazoo.ErrMalformed}))
	handle(partitionError(4, &kazoo.ZnodeError{Op: "set", Path: "/consumers/my-group/offsets/my-topic/4", Err: kazoo.ErrConnectionClosed}))
	// Output:
	// my-topic/0 claim lost: delivery stopped; unmarked messages come again
	// my-topic/1 offset changed underneath: resumed at 0
	// my-topic/2 not claimed after 61 attempts: look at the owner
	// my-topic/3 malformed znode: repair it
	// my-topic/4 ZooKeeper did not answer: retried
}

// Close stops delivery, waits up to Offsets.ProcessingTimeout for what was
// delivered to be marked, commits, releases the partitions and leaves the
// group. It returns within ProcessingTimeout + 1.5 x the session timeout
// even when ZooKeeper is out of reach; a second call returns
// AlreadyClosing.
func ExampleConsumerGroup_Close() {
	group, err := consumergroup.JoinConsumerGroup("my-group", []string{"my-topic"}, []string{"127.0.0.1:2181"}, nil)
	if err != nil {
		log.Fatalln(err)
	}
	// ... consume ...
	if err := group.Close(); errors.Is(err, consumergroup.UncleanClose) {
		log.Println("some marks were not committed; their messages come again:", err)
	} else if err != nil {
		log.Println("close:", err)
	}
	if err := group.Close(); errors.Is(err, consumergroup.AlreadyClosing) {
		fmt.Println("closed already")
	}
}

// Validate (which JoinConsumerGroup calls) names every invalid field and
// never replaces a value silently.
func ExampleConfig_Validate() {
	config := consumergroup.NewConfig()
	config.Offsets.ProcessingTimeout = 0
	err := config.Validate()
	var ce *consumergroup.ConfigError
	fmt.Println(errors.Is(err, consumergroup.ErrInvalidConfig), errors.As(err, &ce) && ce.Field == "Offsets.ProcessingTimeout")
	// Output:
	// true true
}
