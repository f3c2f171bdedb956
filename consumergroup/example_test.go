package consumergroup_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sort"
	"syscall"
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
// already done what each cause needs (docs/errors.md has the table); the
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

// Consume through a sarama.ConsumerGroupHandler: NewConsumerGroup returns
// a sarama.ConsumerGroup, so a program written for sarama.NewConsumerGroup
// changes only its constructor. Each claimed partition runs ConsumeClaim in
// a goroutine of its own; a rebalance closes the channels of the partitions
// that move and leaves the others running, so Consume returns only when
// ctx is done or the group closes.
func ExampleNewConsumerGroup() {
	config := consumergroup.NewConfig()
	config.Offsets.Initial = sarama.OffsetOldest

	zookeeper, chroot := kazoo.ParseConnectionString("127.0.0.1:2181")
	config.Zookeeper.Chroot = chroot
	var group sarama.ConsumerGroup
	group, err := consumergroup.NewConsumerGroup("my-group", zookeeper, config)
	if err != nil {
		log.Fatalln(err) // an invalid name, address list or config: nothing was dialled
	}
	go func() {
		for err := range group.Errors() {
			log.Println("group:", err)
		}
	}()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for ctx.Err() == nil {
		if err := group.Consume(ctx, []string{"my-topic"}, printMarker{}); err != nil {
			log.Println("consume:", err)
		}
	}
	if err := group.Close(); err != nil {
		log.Println("close:", err)
	}
}

// printMarker prints and marks every message: a plain
// sarama.ConsumerGroupHandler that knows nothing of the group running it.
type printMarker struct{}

// Setup runs once per session, before any claim delivers.
func (printMarker) Setup(sarama.ConsumerGroupSession) error { return nil }

// Cleanup runs once per session, after every ConsumeClaim returned.
func (printMarker) Cleanup(sarama.ConsumerGroupSession) error { return nil }

// ConsumeClaim prints and marks one partition's messages until its channel
// closes or the session ends.
func (printMarker) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case msg, ok := <-claim.Messages():
			if !ok {
				return nil // the partition moved to another member
			}
			fmt.Printf("%s/%d@%d: %s\n", msg.Topic, msg.Partition, msg.Offset, msg.Value)
			session.MarkMessage(msg, "")
		case <-session.Context().Done():
			return nil
		}
	}
}

// Assign is the function every member computes on its own: the same
// members and partitions give every member the same answer, so the group
// needs no leader. StrategyRangeByLeader (upstream's) sorts
// partitions by leader, then ID; StrategyRangeByID by ID only, so a leader
// change moves nothing. Each instance gets P/C partitions, the first P%C
// one more.
func ExampleAssign() {
	partitions := []consumergroup.PartitionInfo{
		{ID: 0, Leader: 2}, {ID: 1, Leader: 1}, {ID: 2, Leader: 2}, {ID: 3, Leader: 1},
		{ID: 4, Leader: 2}, {ID: 5, Leader: 1}, {ID: 6, Leader: 2}, {ID: 7, Leader: 1},
	}
	members := []string{"member-c", "member-a", "member-b"}
	for _, strategy := range []consumergroup.AssignmentStrategy{consumergroup.StrategyRangeByLeader, consumergroup.StrategyRangeByID} {
		assignment, err := consumergroup.Assign(strategy, members, partitions)
		if err != nil {
			log.Fatalln(err)
		}
		ids := make([]string, 0, len(assignment))
		for id := range assignment {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		fmt.Println(strategy)
		for _, id := range ids {
			fmt.Print("  ", id, ":")
			for _, p := range assignment[id] {
				fmt.Printf(" %d(leader %d)", p.ID, p.Leader)
			}
			fmt.Println()
		}
	}
	// Output:
	// range-by-leader
	//   member-a: 1(leader 1) 3(leader 1) 5(leader 1)
	//   member-b: 7(leader 1) 0(leader 2) 2(leader 2)
	//   member-c: 4(leader 2) 6(leader 2)
	// range-by-id
	//   member-a: 0(leader 2) 1(leader 1) 2(leader 2)
	//   member-b: 3(leader 1) 4(leader 2) 5(leader 1)
	//   member-c: 6(leader 2) 7(leader 1)
}
