// Command demo shows a consumer group surviving a member cut off from
// ZooKeeper. A producer writes continuously to a new topic; three group
// members consume it, each reaching ZooKeeper through a proxy of its own. A
// view refreshed every second shows, per member, the partitions it owns,
// the messages it is given per second and its lag.
//
// A quarter into the run, member 2's proxy drops its ZooKeeper connections
// and refuses new ones, as a crash or a network partition would. Within
// half the session timeout the member stops delivering (it is fenced: it
// cannot prove its claims still hold); once the session expires its
// partitions move to the other two. Later the proxy lets it through again:
// it finds its session gone, joins again and gets its share back. At the
// end the demo checks every message written against what was delivered:
//
//	produced, consumed, lost (must be 0), delivered twice (and why),
//	and the worst handoff (the longest a partition had no deliverer).
//
// With the local stack up (integration/stack.sh up), from the repository:
//
//	go run ./examples/demo                        # 60 s, live view
//	go run ./examples/demo -plain -duration 30s   # a line a second, for logs
//
// `make demo` starts the stack when needed and runs it. The exit status is
// 1 if a message was lost or a partition was never consumed, 130 if SIGINT
// or SIGTERM cut the run short (the summary is printed anyway). The topic and
// the group are made up for the run and deleted at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/IBM/sarama"
)

// errInterrupted: SIGINT or SIGTERM stopped the run early.
var errInterrupted = errors.New("interrupted")

type options struct {
	zookeeper  string
	duration   time.Duration
	partitions int
	rate       int
	session    time.Duration
	plain      bool
	verbose    bool
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, o, os.Stdout, os.Stderr); errors.Is(err, errInterrupted) {
		os.Exit(130) // as a shell reports SIGINT, so that scripts tell it from a failure
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	o := &options{}
	zk := os.Getenv("ZK_ADDR")
	if zk == "" {
		zk = "127.0.0.1:2181"
	}
	fs.StringVar(&o.zookeeper, "zookeeper", zk, "ZooKeeper connection string (`host:port,...[/chroot]`; default $ZK_ADDR or 127.0.0.1:2181)")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long the producer writes; at least 5 x -session")
	fs.IntVar(&o.partitions, "partitions", 16, "partitions of the topic the demo creates (at least 3)")
	fs.IntVar(&o.rate, "rate", 400, "messages written per second")
	fs.DurationVar(&o.session, "session", 4*time.Second, "ZooKeeper session timeout of the members")
	fs.BoolVar(&o.plain, "plain", false, "print a plain line a second instead of redrawing the screen")
	fs.BoolVar(&o.verbose, "verbose", false, "log the group's and sarama's activity to standard error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.partitions < 3:
		return nil, errors.New("-partitions must be at least 3, one for each member")
	case o.rate <= 0:
		return nil, errors.New("-rate must be positive")
	case o.session < 2*time.Second:
		return nil, errors.New("-session must be at least 2s")
	case o.duration < 5*o.session:
		return nil, fmt.Errorf("-duration must be at least 5 x -session (%s), to see partitions move and come back", 5*o.session)
	}
	return o, nil
}

// run sets up the topic and the members, runs the script, and prints the
// summary; it fails if the summary shows a lost message or a partition
// never consumed.
func run(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	var verbose slog.Handler
	if o.verbose {
		sarama.Logger = log.New(stderr, "[sarama] ", log.LstdFlags|log.Lmicroseconds)
		verbose = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	d, err := setUp(o, verbose)
	if err != nil {
		return err
	}
	defer d.tearDown(stderr)

	s := newScript(o, d)
	if err := s.run(ctx, stdout, isTerminal(stdout) && !o.plain); err != nil {
		return err
	}
	produced, deliveries := d.ledger.snapshot()
	sum := summarize(produced, deliveries, s.cutWindow())
	sum.interrupted = ctx.Err() != nil
	sum.print(stdout, s.cutWindow())
	if sum.interrupted {
		return errInterrupted
	}
	if !sum.ok() {
		return fmt.Errorf("%d messages lost, %d of %d partitions consumed", sum.lost, sum.consumedIn, sum.partitions)
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
