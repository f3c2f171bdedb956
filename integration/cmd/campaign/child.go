package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/integration/campaign"
)

// childMode is the first argument that makes the binary a member: it joins
// the group, hands every message to a stand-in application that records it
// (with the epoch of its claim) and marks it, until SIGTERM closes the group.
const childMode = "member"

func runChild(args []string) int {
	fs := flag.NewFlagSet(childMode, flag.ContinueOnError)
	group := fs.String("group", "", "group to join")
	topic := fs.String("topic", "", "topic to consume")
	zkList := fs.String("zk", "", "ZooKeeper addresses (the member's proxies)")
	reader := fs.String("reader", "", "this incarnation's name in the history")
	out := fs.String("out", "", "history file to append deliveries to")
	session := fs.Duration("session", 4*time.Second, "ZooKeeper session timeout")
	buffer := fs.Int("messages-buffer", 0, "Messages.Buffer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	f, err := os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		return 1
	}
	defer f.Close()
	cfg := memberConfig(*session)
	cfg.Messages.Buffer = *buffer
	cg, err := consumergroup.JoinConsumerGroup(*group, []string{*topic}, splitList(*zkList), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "member: join:", err)
		return 1
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-term
		_ = cg.Close()
	}()
	msgs, errs := cg.Messages(), cg.Errors()
	for msgs != nil || errs != nil {
		select {
		case m, ok := <-msgs:
			if !ok {
				msgs = nil
				continue
			}
			// Written before the mark, in one write each: a member killed
			// with SIGKILL never committed a delivery its file lacks.
			if err := record(f, *reader, cg, m); err != nil {
				fmt.Fprintln(os.Stderr, "member: record:", err)
				return 1
			}
			_ = cg.CommitUpto(m)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			fmt.Fprintf(os.Stderr, "%s %s: %v\n", time.Now().Format("15:04:05.000"), *reader, err)
		}
	}
	return 0
}

func record(f *os.File, reader string, cg *consumergroup.ConsumerGroup, m *sarama.ConsumerMessage) error {
	epoch, ok := cg.MessageEpoch(m)
	if !ok {
		epoch = -1
	}
	line, err := json.Marshal(campaign.Record{Delivery: &campaign.Delivery{
		Reader: reader, Partition: m.Partition, Offset: m.Offset, Value: string(m.Value), Epoch: epoch, At: time.Now(),
	}})
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	return err
}

// memberConfig is the group configuration of every member: the test
// suite's short timeouts, commits every 100 ms.
func memberConfig(session time.Duration) *consumergroup.Config {
	cfg := consumergroup.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Offsets.Initial = sarama.OffsetOldest
	cfg.Offsets.ProcessingTimeout = 5 * time.Second
	cfg.Offsets.CommitInterval = commitInterval
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Zookeeper.Timeout = session
	return cfg
}

// commitInterval is the members' Offsets.CommitInterval.
const commitInterval = 100 * time.Millisecond
