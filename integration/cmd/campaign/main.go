// Command campaign runs randomized, replayable fault campaigns against a
// consumer group on a real stack (a ZooKeeper ensemble of three and three
// brokers, integration/stack.sh with ZK_NODES=3 KAFKA_BROKERS=3), records
// each run's history and checks it with package campaign. See
// docs/campaign.md.
//
//	campaign -runs 10 -duration 20s        ten runs of seeds drawn at random
//	campaign -seed 1234 -duration 20s      replay the schedule of seed 1234
//	campaign -check campaign-out/seed-1234 check a saved history again
//	campaign -summarize out1 out2          one table over every run saved there
//
// The stack's settings come from the environment, as integration/stack.sh
// env prints them (ZK_ADDR, KAFKA_ADDRS, and ZK_NODES, ZK_PORT, KAFKA_PORT,
// STACK_DIR... for the faults it asks stack.sh for).
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/zkgroup/kafka/integration/campaign"
)

// options are the command's flags.
type options struct {
	seed        uint64
	seeded      bool
	runs        int
	duration    time.Duration
	members     int
	maxMembers  int
	partitions  int
	rate        int
	session     time.Duration
	orphan      time.Duration
	drain       time.Duration
	buffer      int // the members' Messages.Buffer
	kinds       []campaign.Kind
	out         string
	recheck     string
	summarize   []string // out directories to summarize
	stackScript string
	zk          []string
	brokers     []string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == childMode {
		os.Exit(runChild(os.Args[2:]))
	}
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		os.Exit(2)
	}
	if o.recheck != "" {
		os.Exit(recheck(o))
	}
	if o.summarize != nil {
		os.Exit(summarizeDirs(os.Stdout, o.summarize, o.settings()))
	}
	os.Exit(runCampaign(o))
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("campaign", flag.ContinueOnError)
	o := &options{}
	seed := fs.Uint64("seed", 0, "replay the schedule of this seed (one run)")
	fs.IntVar(&o.runs, "runs", 1, "runs, each with a seed drawn at random (ignored with -seed)")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "how long faults are injected in each run")
	fs.IntVar(&o.members, "members", 3, "members at the start of a run")
	fs.IntVar(&o.maxMembers, "max-members", 5, "most members joins may bring")
	fs.IntVar(&o.partitions, "partitions", 8, "partitions of each run's topic")
	fs.IntVar(&o.rate, "rate", 200, "messages produced a second")
	fs.DurationVar(&o.session, "session", 4*time.Second, "the members' ZooKeeper session timeout")
	fs.DurationVar(&o.orphan, "orphan-bound", 0, "longest a partition may stay unowned (0: 2 x session + 3s)")
	fs.IntVar(&o.buffer, "messages-buffer", 0, "the members' Messages.Buffer (0: an unbuffered Messages())")
	fs.DurationVar(&o.drain, "drain", 45*time.Second, "how long a run waits after its faults for every acknowledged message")
	kinds := fs.String("faults", "", "comma-separated fault kinds to draw from (default: all but offset-reset)")
	fs.StringVar(&o.out, "out", "campaign-out", "directory for histories and failing-seeds.txt")
	fs.StringVar(&o.recheck, "check", "", "check the history.json of a run's directory again instead of running (no stack needed)")
	summarize := fs.Bool("summarize", false, "print one table over the runs saved under the directories given as arguments, each history checked again (no stack needed)")
	fs.StringVar(&o.stackScript, "stack", "integration/stack.sh", "the stack script the faults call")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "seed" {
			o.seed, o.seeded = *seed, true
		}
	})
	if *kinds != "" {
		for _, k := range strings.Split(*kinds, ",") {
			if !known(campaign.Kind(k)) {
				return nil, fmt.Errorf("-faults: unknown kind %q (known: %v)", k, campaign.Kinds)
			}
			o.kinds = append(o.kinds, campaign.Kind(k))
		}
	}
	if o.orphan == 0 {
		o.orphan = 2*o.session + 3*time.Second
	}
	if *summarize {
		if fs.NArg() == 0 {
			return nil, fmt.Errorf("-summarize: name at least one directory")
		}
		o.summarize = fs.Args()
	}
	if o.recheck != "" || o.summarize != nil {
		return o, nil
	}
	o.zk = splitList(os.Getenv("ZK_ADDR"))
	o.brokers = splitList(os.Getenv("KAFKA_ADDRS"))
	switch {
	case len(o.zk) != 3:
		return nil, fmt.Errorf("ZK_ADDR must list the ensemble's three servers, got %q", os.Getenv("ZK_ADDR"))
	case len(o.brokers) != 3:
		return nil, fmt.Errorf("KAFKA_ADDRS must list three brokers, got %q", os.Getenv("KAFKA_ADDRS"))
	case o.runs < 1 || o.members < 1 || o.maxMembers < o.members || o.partitions < 1 || o.rate < 1:
		return nil, fmt.Errorf("-runs, -members, -partitions and -rate must be >= 1, -max-members >= -members")
	case o.buffer < 0:
		return nil, fmt.Errorf("-messages-buffer must be >= 0, got %d", o.buffer)
	}
	return o, nil
}

func known(k campaign.Kind) bool {
	for _, c := range campaign.Kinds {
		if c == k {
			return true
		}
	}
	return false
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// scheduleConfig is the shape of every run's schedule.
func (o *options) scheduleConfig() campaign.ScheduleConfig {
	return campaign.ScheduleConfig{
		Duration: o.duration, Members: o.members, MaxMembers: o.maxMembers, Brokers: len(o.brokers),
		Partitions: int32(o.partitions), Kinds: o.kinds,
		MinGap: 500 * time.Millisecond, MaxGap: 3 * time.Second,
		MinHold: 500 * time.Millisecond, MaxHold: 2*o.session + time.Second,
	}
}

// runCampaign runs the seeds and prints the table; it returns the exit
// code: 1 if any run failed.
func runCampaign(o *options) int {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		return 1
	}
	seeds := []uint64{o.seed}
	if !o.seeded {
		seeds = seeds[:0]
		for range o.runs {
			seeds = append(seeds, rand.Uint64()%1_000_000)
		}
	}
	var results []runSummary
	for i, seed := range seeds {
		fmt.Printf("run %d/%d, seed %d\n", i+1, len(seeds), seed)
		res := runOnce(o, seed)
		results = append(results, res)
		if res.Error != "" {
			fmt.Fprintf(os.Stderr, "seed %d: %v\n", seed, res.Error)
		}
		if res.failed() {
			saveFailingSeed(o.out, res)
		}
	}
	printTable(os.Stdout, results)
	for _, r := range results {
		if r.failed() {
			return 1
		}
	}
	return 0
}
