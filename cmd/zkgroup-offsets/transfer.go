package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/IBM/sarama"
)

// cmdTransfer copies a group's committed offsets from ZooKeeper to Kafka's
// group coordinator or back. Both stores hold the next offset to consume,
// so the numbers are copied unchanged; after writing, the offsets are read
// back from the destination and compared.
func cmdTransfer(args []string, out, errOut io.Writer) error {
	c := newCLI("transfer", "transfer -group G -to kafka|zookeeper [-kafka-group K] [-topic T,...] [-execute [-force]]")
	to := c.fs.String("to", "", "destination: `kafka` (from ZooKeeper) or zookeeper (from Kafka)")
	kafkaGroup := c.fs.String("kafka-group", "", "the group's name in Kafka (default: -group)")
	topicsFlag := c.fs.String("topic", "", "only these topics (`T1,T2`)")
	execute := c.fs.Bool("execute", false, "write the offsets (default: dry run)")
	force := c.fs.Bool("force", false, "write even while the source group runs (its offsets may move) or instances are registered in the ZooKeeper group")
	if err := c.parse(args, 0, 0); err != nil {
		return err
	}
	if *to != "kafka" && *to != "zookeeper" {
		return c.usageErr("-to must be kafka or zookeeper")
	}
	if *kafkaGroup == "" {
		*kafkaGroup = c.group
	}
	e, err := c.connect()
	if err != nil {
		return err
	}
	defer e.close()
	t := transfer{env: e, out: out, plan: newPlanner(out, errOut, false), zkGroup: c.group, kafkaGroup: *kafkaGroup, topics: splitList(*topicsFlag), execute: *execute, force: *force}
	if *to == "kafka" {
		return t.toKafka()
	}
	return t.toZooKeeper()
}

// transfer is one transfer's settings.
type transfer struct {
	*env
	out        io.Writer
	plan       planner
	zkGroup    string
	kafkaGroup string
	topics     []string // filter; empty: all
	execute    bool
	force      bool
}

// filter keeps the offsets of the selected topics, failing on a selected
// topic the source has no offsets for.
func (t *transfer) filter(offsets map[string]map[int32]int64, source string) (map[string]map[int32]int64, error) {
	if len(t.topics) > 0 {
		picked := make(map[string]map[int32]int64)
		for _, topic := range t.topics {
			if len(offsets[topic]) == 0 {
				return nil, fmt.Errorf("%s has no committed offsets for topic %q", source, topic)
			}
			picked[topic] = offsets[topic]
		}
		offsets = picked
	}
	if len(offsets) == 0 {
		return nil, fmt.Errorf("%s has no committed offsets", source)
	}
	return offsets, nil
}

// checkExists fails on topics or partitions the cluster does not have.
func (t *transfer) checkExists(offsets map[string]map[int32]int64) error {
	var errs []error
	for topic, parts := range offsets {
		if _, err := t.namedPartitions(topic, parts); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// kafkaGroupState returns the Kafka group's state ("Empty", "Stable",
// "Dead", ...) and its member count.
func (t *transfer) kafkaGroupState() (string, int, error) {
	admin, err := t.clusterAdmin()
	if err != nil {
		return "", 0, err
	}
	groups, err := admin.DescribeConsumerGroups([]string{t.kafkaGroup})
	if err != nil {
		return "", 0, fmt.Errorf("describe Kafka group %s: %w", t.kafkaGroup, err)
	}
	if len(groups) != 1 {
		return "", 0, fmt.Errorf("describe Kafka group %s: %d answers", t.kafkaGroup, len(groups))
	}
	g := groups[0]
	if !errors.Is(g.Err, sarama.ErrNoError) {
		return "", 0, fmt.Errorf("describe Kafka group %s: %w", t.kafkaGroup, g.Err)
	}
	return g.State, len(g.Members), nil
}

// kafkaOffsets reads the Kafka group's committed offsets: of the given
// partitions, or of every partition when which is nil. Partitions without
// a committed offset are left out.
func (t *transfer) kafkaOffsets(which map[string][]int32) (map[string]map[int32]int64, error) {
	return t.kafkaGroupOffsets(t.kafkaGroup, which)
}

// toKafka copies the ZooKeeper group's offsets into the Kafka group.
func (t *transfer) toKafka() error {
	cg, err := t.existingGroup(t.zkGroup)
	if err != nil {
		return err
	}
	src, err := cg.FetchAllOffsets()
	if err != nil {
		return fmt.Errorf("offsets of group %s: %w", cg.Name, err)
	}
	if src, err = t.filter(src, "ZooKeeper group "+cg.Name); err != nil {
		return err
	}
	if err := t.checkExists(src); err != nil {
		return fmt.Errorf("nothing written:\n%w", err)
	}
	which := make(map[string][]int32)
	for topic, parts := range src {
		for p := range parts {
			which[topic] = append(which[topic], p)
		}
	}
	before, err := t.kafkaOffsets(which)
	if err != nil {
		return err
	}
	changes := changesFrom(src, before)
	fmt.Fprintf(t.out, "ZooKeeper group %s -> Kafka group %s (BEFORE: Kafka's committed offset, AFTER: ZooKeeper's)\n", cg.Name, t.kafkaGroup)
	if err := printPlan(t.out, changes); err != nil {
		return err
	}

	var refusals []string
	instances, err := cg.Instances()
	if err != nil {
		return fmt.Errorf("instances of group %s: %w", cg.Name, err)
	}
	if len(instances) > 0 && !t.force {
		refusals = append(refusals, fmt.Sprintf("%d instances are registered in ZooKeeper group %s, so its offsets may still move; stop them or give -force", len(instances), cg.Name))
	}
	state, members, err := t.kafkaGroupState()
	if err != nil {
		return err
	}
	if members > 0 || (state != "Empty" && state != "Dead" && state != "") {
		// The coordinator refuses commits from outside a live generation,
		// and its members would overwrite them anyway: -force does not help.
		refusals = append(refusals, fmt.Sprintf("Kafka group %s is active (state %s, %d members); stop its members first", t.kafkaGroup, state, members))
	}
	if !t.execute {
		for _, r := range refusals {
			fmt.Fprintf(t.out, "note: -execute would refuse: %s\n", r)
		}
		fmt.Fprintf(t.out, "dry run: %d offsets of Kafka group %s not written; add -execute to write them\n", len(changes), t.kafkaGroup)
		return nil
	}
	if len(refusals) > 0 {
		return errors.New(strings.Join(refusals, "; "))
	}

	if err := t.commitKafka(t.kafkaGroup, src); err != nil {
		return err
	}
	after, err := t.kafkaOffsets(which)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if err := compareOffsets(src, after); err != nil {
		return fmt.Errorf("read back from Kafka group %s: %w", t.kafkaGroup, err)
	}
	fmt.Fprintf(t.out, "wrote %d offsets to Kafka group %s; read back: all match\n", len(changes), t.kafkaGroup)
	return nil
}

// toZooKeeper copies the Kafka group's offsets into the ZooKeeper group,
// through fenced resets.
func (t *transfer) toZooKeeper() error {
	src, err := t.kafkaOffsets(nil)
	if err != nil {
		return err
	}
	if src, err = t.filter(src, "Kafka group "+t.kafkaGroup+" (does it exist?)"); err != nil {
		return err
	}
	if err := t.checkExists(src); err != nil {
		return fmt.Errorf("nothing written:\n%w", err)
	}
	state, members, err := t.kafkaGroupState()
	if err != nil {
		return err
	}
	cg := t.kz.Consumergroup(t.zkGroup)
	exists, err := cg.Exists()
	if err != nil {
		return err
	}
	committed := map[string]map[int32]int64{}
	if exists {
		if committed, err = cg.FetchAllOffsets(); err != nil {
			return fmt.Errorf("offsets of group %s: %w", cg.Name, err)
		}
	} else {
		fmt.Fprintf(t.out, "note: group %s does not exist in ZooKeeper; -execute creates it\n", cg.Name)
	}
	fmt.Fprintf(t.out, "Kafka group %s -> ZooKeeper group %s (BEFORE: ZooKeeper's committed offset, AFTER: Kafka's)\n", t.kafkaGroup, cg.Name)
	if members > 0 && !t.force {
		msg := fmt.Sprintf("Kafka group %s is active (state %s, %d members), so its offsets may still move; stop its members or give -force", t.kafkaGroup, state, members)
		if t.execute {
			_ = printPlan(t.out, changesFrom(src, committed))
			return errors.New(msg)
		}
		fmt.Fprintf(t.out, "note: -execute would refuse: %s\n", msg)
	}
	return applyZooKeeper(t.plan, cg, changesFrom(src, committed), t.execute, t.force)
}

// changesFrom lists the changes that make dst hold src's offsets.
func changesFrom(src, dst map[string]map[int32]int64) []change {
	var cs []change
	for topic, parts := range src {
		for p, off := range parts {
			cs = append(cs, change{Topic: topic, Partition: p, Before: committedPtr(dst, topic, p), After: off})
		}
	}
	sortChanges(cs)
	return cs
}

// compareOffsets returns an error naming every partition of want that got
// does not hold exactly.
func compareOffsets(want, got map[string]map[int32]int64) error {
	var diffs []string
	for topic, parts := range want {
		for p, off := range parts {
			if g, ok := got[topic][p]; !ok || g != off {
				diffs = append(diffs, fmt.Sprintf("%s/%d: %s, want %d", topic, p, orDashOK(g, ok), off))
			}
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		return fmt.Errorf("offsets differ: %s", strings.Join(diffs, "; "))
	}
	return nil
}
