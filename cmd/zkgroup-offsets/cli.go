package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/internal/secflags"
)

// usageError is a mistake in the command line: run prints msg and the
// subcommand's usage and exits with status 2 (0 for -h).
type usageError struct {
	msg   string
	usage func(io.Writer)
	help  bool
}

func (e usageError) Error() string { return e.msg }

// cli holds one subcommand's flag set and the flags every subcommand has.
type cli struct {
	fs           *flag.FlagSet
	synopsis     string
	zookeeper    string
	brokers      string
	kafkaVersion string
	group        string
	sec          *secflags.Flags
	storageFlag  *string      // -storage; nil where the command has none
	storage      offsets.Kind // parsed -storage

	help string // printed after the flags by -h: target forms, notes

	groupOptional bool // -group may be left out (import takes it from the file)
}

func newCLI(name, synopsis string) *cli {
	c := &cli{fs: flag.NewFlagSet(name, flag.ContinueOnError), synopsis: synopsis}
	c.fs.SetOutput(io.Discard)
	c.fs.StringVar(&c.zookeeper, "zookeeper", "127.0.0.1:2181", "ZooKeeper connection string (`host:port,...[/chroot]`)")
	c.fs.StringVar(&c.brokers, "brokers", "", "Kafka brokers (`host:port,...`); default: the brokers registered in ZooKeeper")
	c.fs.StringVar(&c.kafkaVersion, "kafka-version", "2.8.0", "Kafka protocol `version` to speak")
	c.fs.StringVar(&c.group, "group", "", "consumer group (its name in ZooKeeper)")
	c.sec = secflags.Register(c.fs)
	return c
}

// withStorage adds -storage, for the commands that read or write one
// group's offsets.
func (c *cli) withStorage() *cli {
	c.storageFlag = c.fs.String("storage", "zookeeper", "where the group keeps its offsets: `zookeeper`, kafka or dual (as its Offsets.Storage)")
	return c
}

func (c *cli) printUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: zkgroup-offsets %s\n\nflags:\n", c.synopsis)
	c.fs.SetOutput(w)
	c.fs.PrintDefaults()
	c.fs.SetOutput(io.Discard)
	fmt.Fprint(w, c.help)
	fmt.Fprint(w, exitCodes)
}

// parse parses args and checks that -group was given and that the number
// of positional arguments is within [minArgs, maxArgs].
func (c *cli) parse(args []string, minArgs, maxArgs int) error {
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return usageError{usage: c.printUsage, help: true}
		}
		return usageError{msg: err.Error(), usage: c.printUsage}
	}
	if c.storageFlag != nil {
		k, err := parseStorage(*c.storageFlag)
		if err != nil {
			return c.usageErr("-storage: " + err.Error())
		}
		c.storage = k
	}
	switch {
	case c.group == "" && !c.groupOptional:
		return c.usageErr("-group is required")
	case c.fs.NArg() < minArgs:
		return c.usageErr("missing arguments")
	case c.fs.NArg() > maxArgs:
		return c.usageErr(fmt.Sprintf("unexpected arguments %q (flags go before arguments)", c.fs.Args()[maxArgs:]))
	}
	return nil
}

func (c *cli) usageErr(msg string) error { return usageError{msg: msg, usage: c.printUsage} }

// exitCodes ends every usage text.
const exitCodes = `
exit status: 0 success (a dry run included), 1 an error (a refused write
included), 2 a usage error.
`

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// parsePartitions parses a comma-separated list of partition ids.
func parsePartitions(s string) ([]int32, error) {
	var out []int32
	seen := make(map[int32]bool)
	for _, item := range splitList(s) {
		p, err := strconv.ParseInt(item, 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("partition %q is not a non-negative integer", item)
		}
		if !seen[int32(p)] {
			seen[int32(p)] = true
			out = append(out, int32(p))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func sortInt32(s []int32) { sort.Slice(s, func(i, j int) bool { return s[i] < s[j] }) }
