// Command consoleconsumer prints the messages of one or more topics to
// standard output, one value per line, as a member of a ZooKeeper-coordinated
// consumer group.
//
//	go run ./examples/consoleconsumer -topics zkgroup.test.four -offset oldest
//
// Without -group it joins a group of its own (console-<random>), so it
// receives every partition and disturbs no other group, and it deletes that
// group from ZooKeeper when it exits. With -group it
// shares the partitions with the group's other members and commits its
// progress there. -verbose sends the group's log records (joins, claims,
// rebalances, commits) to standard error as slog text, and sarama's log
// with them.
//
// SIGINT or SIGTERM, -max messages or -timeout stop it; it then commits
// what it printed and leaves the group before exiting, within 25 s (under
// the 30 s a Kubernetes pod is given: see docs/shutdown.md).
//
// The security flags (see -help) set TLS to ZooKeeper, the group's digest
// credentials (with -zk-user the nodes it creates get kazoo.GroupACL of
// those credentials, as every member of a protected group must), and TLS
// and SASL/SCRAM to Kafka through sarama.Config; -listener SASL_SSL picks
// the brokers' secure listener.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/secflags"
	"github.com/zkgroup/kafka/kazoo"
)

// shutdownTimeout bounds leaving the group: a pod's default grace period
// (30 s) less a margin for exiting.
const shutdownTimeout = 25 * time.Second

type options struct {
	zookeeper string
	group     string
	topics    []string
	initial   int64
	keys      bool
	max       int
	timeout   time.Duration
	verbose   bool
	temporary bool // group was generated: delete it on exit
	sec       *secflags.Flags
}

func main() {
	opts, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "consoleconsumer:", err)
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, opts, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "consoleconsumer:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("consoleconsumer", flag.ContinueOnError)
	var (
		o      options
		topics string
		offset string
	)
	fs.StringVar(&o.zookeeper, "zookeeper", "127.0.0.1:2181", "ZooKeeper connection string (`host:port,...[/chroot]`)")
	fs.StringVar(&o.group, "group", "", "consumer group to join (default: a new group console-<random>)")
	fs.StringVar(&topics, "topics", "zkgroup.test.four", "comma-separated topics to consume")
	fs.StringVar(&offset, "offset", "newest", "where partitions without a committed offset start: oldest or newest")
	fs.BoolVar(&o.keys, "keys", false, "print each message as topic/partition@offset key<TAB>value")
	fs.IntVar(&o.max, "max", 0, "exit after this many messages (0: no limit)")
	fs.DurationVar(&o.timeout, "timeout", 0, "exit after this long (0: no limit)")
	fs.BoolVar(&o.verbose, "verbose", false, "log the group's and sarama's activity to standard error")
	o.sec = secflags.Register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, t := range strings.Split(topics, ",") {
		if t = strings.TrimSpace(t); t != "" {
			o.topics = append(o.topics, t)
		}
	}
	if len(o.topics) == 0 {
		return nil, errors.New("-topics: at least one topic is required")
	}
	switch offset {
	case "oldest":
		o.initial = sarama.OffsetOldest
	case "newest":
		o.initial = sarama.OffsetNewest
	default:
		return nil, fmt.Errorf("-offset must be oldest or newest, got %q", offset)
	}
	if o.max < 0 || o.timeout < 0 {
		return nil, errors.New("-max and -timeout must not be negative")
	}
	if o.group == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		o.group = "console-" + hex.EncodeToString(b[:])
		o.temporary = true
	}
	return &o, nil
}

// run consumes until ctx is done, -max messages were printed, or -timeout
// passed, then closes the group.
func run(ctx context.Context, o *options, out, logOut io.Writer) error {
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}

	config := consumergroup.NewConfig()
	config.Offsets.Initial = o.initial
	config.Offsets.ProcessingTimeout = 5 * time.Second
	config.Offsets.CommitInterval = time.Second
	logger := slog.New(slog.DiscardHandler)
	if o.verbose {
		sarama.Logger = log.New(logOut, "[sarama] ", log.LstdFlags)
		logger = slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug}))
		config.Logger = logger
		config.Zookeeper.Logger = slog.NewLogLogger(logger.Handler().WithAttrs([]slog.Attr{slog.String("component", "zookeeper")}), slog.LevelInfo)
	}
	servers, chroot := kazoo.ParseConnectionString(o.zookeeper)
	config.Zookeeper.Chroot = chroot
	if err := o.sec.ApplyZK(config.Zookeeper); err != nil {
		return err
	}
	if o.sec.ZKUser != "" {
		pw, err := o.sec.ZKPassword()
		if err != nil {
			return err
		}
		config.Zookeeper.ACL = kazoo.GroupACL(o.sec.ZKUser, pw)
	}
	if err := o.sec.Kafka(config.Config); err != nil {
		return err
	}

	group, err := consumergroup.JoinConsumerGroup(o.group, o.topics, servers, config)
	if err != nil {
		return err
	}
	logger.Info("consuming", "group", o.group, "topics", o.topics)

	errorsDone := make(chan struct{})
	go func() {
		defer close(errorsDone)
		for err := range group.Errors() {
			fmt.Fprintln(logOut, "consoleconsumer: group error:", err)
		}
	}()

	printed := 0
	var writeErr error
loop:
	for o.max == 0 || printed < o.max {
		select {
		case <-ctx.Done():
			break loop
		case msg, ok := <-group.Messages():
			if !ok {
				break loop
			}
			if o.keys {
				_, writeErr = fmt.Fprintf(out, "%s/%d@%d %s\t%s\n", msg.Topic, msg.Partition, msg.Offset, msg.Key, msg.Value)
			} else {
				_, writeErr = fmt.Fprintf(out, "%s\n", msg.Value)
			}
			if writeErr != nil {
				break loop // e.g. the reading end of a pipe went away
			}
			printed++
			group.CommitUpto(msg)
		}
	}

	// Closing commits every mark and leaves the group, within
	// shutdownTimeout (a pod's grace period less a margin: docs/shutdown.md).
	// Messages fetched but not printed are not marked, so the next member
	// starts with them.
	closeCtx, cancelClose := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	closeErr := group.CloseContext(closeCtx) // also closes Errors(), ending the goroutine above
	cancelClose()
	<-errorsDone
	if o.temporary && closeErr == nil {
		closeErr = deleteGroup(o.zookeeper, o.group)
	}
	logger.Info("stopped", "printed", printed)
	if writeErr != nil {
		return errors.Join(fmt.Errorf("write: %w", writeErr), closeErr)
	}
	return closeErr
}

// deleteGroup removes a group this program made up, offsets and all, so
// that console sessions do not pile up under /consumers.
func deleteGroup(zookeeper, name string) error {
	kz, err := kazoo.NewKazooFromConnectionString(zookeeper, nil)
	if err != nil {
		return fmt.Errorf("delete group %s: %w", name, err)
	}
	defer kz.Close()
	if err := kz.Consumergroup(name).Delete(); err != nil {
		return fmt.Errorf("delete group %s: %w", name, err)
	}
	return nil
}
