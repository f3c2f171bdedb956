package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkgroup/kafka/bench/internal/benchstack"
	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// With -conns the program counts each group's TCP connections per broker
// instead of timing it: ours (handler), sarama's and franz-go's group each
// read the topic in a child process, which counts its own established
// connections (testenv.EstablishedConns) in three phases:
//
//   - busy: the most seen while the group reads the topic (sampled every
//     20 ms);
//   - idle: 3 s after the last message, every partition long-polling;
//   - idle after -conns-idle: that long after the last message (franz-go
//     closes connections idle for 20 s; our own connection closes after
//     a minute without any fetch, which long polls do not leave).

// connsReaders are the groups -conns compares, in the table's order.
var connsReaders = map[string]func(ctx context.Context, st benchstack.Stack, group, topic string, seen *atomic.Int64) error{
	"handler":      connsHandler,
	"sarama-group": connsSaramaGroup,
	"franz-group":  connsFranzGroup,
}

// connsPrefix starts the lines a child prints its counts on:
// "throughput-conns <phase>\t<addr>=<n> <addr>=<n> ...".
const connsPrefix = "throughput-conns "

// connsRow is one reader's counts in one phase, by remote address.
type connsRow struct {
	reader, phase string
	counts        map[string]int
}

// runConns runs each reader of names (those connsReaders has) in a child
// and prints the table of their connections.
func runConns(st benchstack.Stack, n int, names []string, producer string, idleWait, timeout time.Duration) error {
	topic := fmt.Sprintf("zkgroup.bench.conns.%d", time.Now().UnixNano())
	defer benchstack.DeleteTopic(st.Brokers, topic)
	total, err := produce(st.Brokers, topic, n, producer)
	if err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	fmt.Printf("topic %s: %d messages on 4 partitions; brokers %s\n", topic, total, strings.Join(st.Brokers, ","))
	var rows []connsRow
	for _, name := range names {
		if _, ok := connsReaders[name]; !ok {
			continue
		}
		got, err := runConnsChild(st, name, topic, total, idleWait, timeout)
		if err != nil {
			return err
		}
		rows = append(rows, got...)
	}
	printConnsTable(os.Stdout, st, rows)
	return nil
}

// runConnsChild re-executes this program to count reader name's
// connections and returns its rows.
func runConnsChild(st benchstack.Stack, name, topic string, n int, idleWait, timeout time.Duration) ([]connsRow, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+idleWait+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "-child", name, "-conns", "-conns-idle", idleWait.String(), "-topic", topic,
		"-n", strconv.Itoa(n), "-timeout", timeout.String())
	cmd.Env = st.Environ()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("reader %s: %w", name, err)
	}
	var rows []connsRow
	for line := range strings.Lines(out.String()) {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), connsPrefix)
		if !ok {
			continue
		}
		phase, list, _ := strings.Cut(v, "\t")
		row := connsRow{reader: name, phase: phase, counts: make(map[string]int)}
		for _, kv := range strings.Fields(list) {
			addr, count, _ := strings.Cut(kv, "=")
			row.counts[addr], _ = strconv.Atoi(count)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("reader %s printed no counts: %q", name, out.String())
	}
	return rows, nil
}

// runConnsChild's other end: run reader name until it read n messages and
// the phases were counted, printing each phase's counts.
func countConnsChild(st benchstack.Stack, name, topic string, n int, idleWait, timeout time.Duration) error {
	read, ok := connsReaders[name]
	if !ok {
		return fmt.Errorf("no connection count for this reader")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+idleWait)
	defer cancel()
	var seen atomic.Int64
	readErr := make(chan error, 1)
	go func() {
		readErr <- read(ctx, st, fmt.Sprintf("bench-conns-%s-%d", name, time.Now().UnixNano()), topic, &seen)
	}()
	busy := map[string]int{}
	for seen.Load() < int64(n) {
		select {
		case err := <-readErr:
			return fmt.Errorf("read %d of %d messages: %v", seen.Load(), n, err)
		case <-time.After(20 * time.Millisecond):
		}
		counts, err := testenv.EstablishedConns()
		if err != nil {
			return err
		}
		for addr, c := range counts {
			busy[addr] = max(busy[addr], c)
		}
	}
	printConns("busy", busy)
	done := time.Now()
	for _, p := range []struct {
		phase string
		after time.Duration
	}{{"idle 3s", 3 * time.Second}, {"idle " + idleWait.String(), idleWait}} {
		select {
		case err := <-readErr:
			return fmt.Errorf("reader ended: %v", err)
		case <-time.After(time.Until(done.Add(p.after))):
		}
		counts, err := testenv.EstablishedConns()
		if err != nil {
			return err
		}
		printConns(p.phase, counts)
	}
	cancel()
	if err := <-readErr; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func printConns(phase string, counts map[string]int) {
	var list []string
	for _, addr := range slices.Sorted(maps.Keys(counts)) {
		list = append(list, fmt.Sprintf("%s=%d", addr, counts[addr]))
	}
	fmt.Printf("%s%s\t%s\n", connsPrefix, phase, strings.Join(list, " "))
}

// printConnsTable writes one row per reader and phase: its connections to
// each broker, to ZooKeeper, and to anything else.
func printConnsTable(w io.Writer, st benchstack.Stack, rows []connsRow) {
	brokers := resolved(st.Brokers)
	zk := resolved([]string{st.ZK})
	fmt.Fprintf(w, "\n| reader | phase | %s | ZooKeeper | other |\n|---|---|%s---|---|\n",
		strings.Join(st.Brokers, " | "), strings.Repeat("---|", len(st.Brokers)))
	for _, r := range rows {
		perBroker := make([]int, len(st.Brokers))
		zkConns, other := 0, 0
		for addr, c := range r.counts {
			if i, ok := brokers[addr]; ok {
				perBroker[i] += c
			} else if _, ok := zk[addr]; ok {
				zkConns += c
			} else {
				other += c
			}
		}
		var cells []string
		for _, c := range perBroker {
			cells = append(cells, strconv.Itoa(c))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d |\n", r.reader, r.phase, strings.Join(cells, " | "), zkConns, other)
	}
}

// resolved maps each "ip:port" the addresses resolve to to the address's
// index.
func resolved(addrs []string) map[string]int {
	out := make(map[string]int)
	for i, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		ips, err := net.LookupIP(host)
		if err != nil {
			continue
		}
		for _, ip := range ips {
			out[net.JoinHostPort(ip.String(), port)] = i
		}
	}
	return out
}

// connsHandler runs our group (as the handler reader) until ctx ends.
func connsHandler(ctx context.Context, st benchstack.Stack, group, topic string, seen *atomic.Int64) error {
	g, err := consumergroup.NewConsumerGroup(group, []string{st.ZK}, benchstack.OurGroupConfig())
	if err != nil {
		return err
	}
	return consumeUntil(ctx, g, topic, seen)
}

// connsSaramaGroup runs sarama's group (as the sarama-group reader) until
// ctx ends.
func connsSaramaGroup(ctx context.Context, st benchstack.Stack, group, topic string, seen *atomic.Int64) error {
	g, err := sarama.NewConsumerGroup(st.Brokers, group, saramaGroupConfig())
	if err != nil {
		return err
	}
	return consumeUntil(ctx, g, topic, seen)
}

// consumeUntil runs g with a handler marking every message, counting them
// in seen, until ctx ends, then closes g.
func consumeUntil(ctx context.Context, g sarama.ConsumerGroup, topic string, seen *atomic.Int64) error {
	h := &markingHandler{n: math.MaxInt64, done: func() {}, counted: seen}
	var err error
	for ctx.Err() == nil { // a session ends at each rebalance
		if err = g.Consume(ctx, []string{topic}, h); err != nil && !errors.Is(err, context.Canceled) {
			break
		}
		err = nil
	}
	if cerr := g.Close(); err == nil {
		err = cerr
	}
	return err
}

// connsFranzGroup runs franz-go's group (as the franz-group reader) until
// ctx ends.
func connsFranzGroup(ctx context.Context, st benchstack.Stack, group, topic string, seen *atomic.Int64) error {
	cl, err := kgo.NewClient(franzGroupOpts(st, group, topic)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			cl.MarkCommitRecords(r)
			seen.Add(1)
		})
	}
	return nil
}
