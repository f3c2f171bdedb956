// Command fencedsink is a group member that writes what it consumes to a
// SQLite database, each write fenced by the epoch of the claim the message
// was delivered under (consumergroup.MessageEpoch): once a later owner of
// a partition has written, the writes of an earlier owner that was cut off
// but kept processing are refused. See docs/fencing-tokens.md.
//
//	go run . -topics zkgroup.test.four -db /tmp/sink.db
//
// The database has one row per partition (epoch, next offset), a row per
// message written (processed) and one per write refused (rejected).
// -unchecked stores the epoch without checking it, to show what the check
// prevents.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/kazoo"
)

func main() {
	host, _ := os.Hostname()
	var (
		zookeeper = flag.String("zookeeper", "127.0.0.1:2181", "ZooKeeper connection string")
		group     = flag.String("group", "zkgroup.example.fencedsink", "consumer group")
		topics    = flag.String("topics", "zkgroup.test.four", "comma-separated topics")
		dbPath    = flag.String("db", "fencedsink.db", "SQLite database file")
		writer    = flag.String("writer", fmt.Sprintf("%s-%d", host, os.Getpid()), "name recorded with each row written")
		unchecked = flag.Bool("unchecked", false, "store the epoch but do not check it (shows what the check prevents)")
		limit     = flag.Int("max", 0, "stop after writing this many messages (0: run until SIGINT/SIGTERM)")
		verbose   = flag.Bool("verbose", false, "log sarama's messages")
	)
	flag.Parse()
	if *verbose {
		sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	sink, err := OpenSink(*dbPath, *writer, !*unchecked)
	if err != nil {
		log.Fatal(err)
	}
	defer sink.Close()

	cfg := consumergroup.NewConfig()
	cfg.Offsets.Initial = sarama.OffsetOldest
	nodes, chroot := kazoo.ParseConnectionString(*zookeeper)
	cfg.Zookeeper.Chroot = chroot
	cg, err := consumergroup.JoinConsumerGroup(*group, strings.Split(*topics, ","), nodes, cfg)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		for err := range cg.Errors() {
			log.Print(err)
		}
	}()
	n, err := consume(ctx, cg, sink, *limit)
	if cerr := cg.Close(); err == nil {
		err = cerr
	}
	fmt.Printf("wrote %d messages to %s\n", n, *dbPath)
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// consume writes each message cg delivers to sink under the epoch of the
// claim it was delivered under, then marks it, until ctx ends or limit
// messages are written (0: no limit). It returns how many were written.
func consume(ctx context.Context, cg *consumergroup.ConsumerGroup, sink *Sink, limit int) (int, error) {
	written := 0
	for limit == 0 || written < limit {
		var m *sarama.ConsumerMessage
		select {
		case m = <-cg.Messages():
		case <-ctx.Done():
			return written, ctx.Err()
		}
		epoch, ok := cg.MessageEpoch(m)
		if !ok {
			// The claim it came under has ended: its next owner gets it
			// again from the last commit.
			continue
		}
		switch err := sink.Write(ctx, epoch, m); {
		case errors.Is(err, ErrFenced):
			log.Printf("not written, a newer owner wrote first: %v", err)
			continue
		case err != nil:
			return written, err
		}
		written++
		_ = cg.CommitUpto(m)
	}
	return written, nil
}
