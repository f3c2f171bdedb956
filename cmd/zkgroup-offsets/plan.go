package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/zkgroup/kafka/kazoo"
)

// change is one partition's offset as it is (Before, nil if none) and as a
// command means to set it (After). Offsets are next offsets to consume.
type change struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Before    *int64 `json:"before"` // null: none committed
	After     int64  `json:"after"`
	Owner     string `json:"owner,omitempty"` // the instance owning the partition now, if any
	Note      string `json:"note,omitempty"`
}

func sortChanges(cs []change) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Topic != cs[j].Topic {
			return cs[i].Topic < cs[j].Topic
		}
		return cs[i].Partition < cs[j].Partition
	})
}

// printPlan prints one row per change.
func printPlan(out io.Writer, changes []change) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "TOPIC\tPARTITION\tBEFORE\tAFTER\tOWNER\tNOTE")
	for _, c := range changes {
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%s\t%s\n", c.Topic, c.Partition, orDash(c.Before), c.After, orDashString(c.Owner), c.Note)
	}
	return w.Flush()
}

// ErrInstancesRegistered is wrapped by the refusal to write the offsets of
// a ZooKeeper group that has registered instances, without -force.
var ErrInstancesRegistered = errors.New("instances are registered in the group")

// applyZooKeeper prints the changes and, with execute, writes them to the
// ZooKeeper group with fenced resets, reads them back and checks them. It
// refuses to write while instances are registered unless force is set.
func applyZooKeeper(p planner, cg *kazoo.Consumergroup, changes []change, execute, force bool) error {
	sortChanges(changes)
	if err := fillOwners(cg, changes); err != nil {
		return err
	}
	if err := p.print(planDoc{Group: cg.Name, Storage: "zookeeper", Execute: execute, Changes: changes}); err != nil {
		return err
	}
	instances, err := cg.Instances()
	if err != nil {
		return fmt.Errorf("instances of group %s: %w", cg.Name, err)
	}
	var refusal error
	if len(instances) > 0 {
		ids := make([]string, len(instances))
		for i, inst := range instances {
			ids[i] = inst.ID
		}
		refusal = fmt.Errorf("%w: group %s has %d (%s); stop them, or give -force to write under them (owners lose their claims and resume at the new offsets)",
			ErrInstancesRegistered, cg.Name, len(ids), strings.Join(ids, ", "))
	}
	if !execute {
		if refusal != nil && !force {
			fmt.Fprintf(p.notes, "note: -execute would refuse: %v\n", refusal)
		}
		fmt.Fprintf(p.notes, "dry run: %d offsets of ZooKeeper group %s not written; add -execute to write them\n", len(changes), cg.Name)
		return nil
	}
	if refusal != nil && !force {
		return refusal
	}
	want := make(map[string]map[int32]int64)
	for _, c := range changes {
		if want[c.Topic] == nil {
			want[c.Topic] = make(map[int32]int64)
		}
		want[c.Topic][c.Partition] = c.After
	}
	if err := cg.ResetOffsetsTo(want); err != nil {
		return fmt.Errorf("write offsets of group %s: %w", cg.Name, err)
	}
	stored, err := cg.FetchAllOffsets()
	if err != nil {
		return fmt.Errorf("read back offsets of group %s: %w", cg.Name, err)
	}
	var mismatches []string
	for _, c := range changes {
		if got, ok := stored[c.Topic][c.Partition]; !ok || got != c.After {
			mismatches = append(mismatches, fmt.Sprintf("%s/%d: stored %s, written %d", c.Topic, c.Partition, orDashOK(got, ok), c.After))
		}
	}
	if len(mismatches) > 0 {
		return fmt.Errorf("read back differs from what was written (a member committed since?): %s", strings.Join(mismatches, "; "))
	}
	fmt.Fprintf(p.notes, "wrote %d offsets to ZooKeeper group %s (fenced: owners re-read them); read back: all match\n", len(changes), cg.Name)
	return nil
}

// fillOwners sets each change's Owner from the ZooKeeper group (none when
// the group does not exist there).
func fillOwners(cg *kazoo.Consumergroup, changes []change) error {
	if ok, err := cg.Exists(); err != nil || !ok {
		return err
	}
	for i := range changes {
		owner, err := cg.PartitionOwner(changes[i].Topic, changes[i].Partition)
		if err != nil {
			return fmt.Errorf("owner of %s/%d: %w", changes[i].Topic, changes[i].Partition, err)
		}
		if owner != nil {
			changes[i].Owner = owner.ID
		}
	}
	return nil
}

func orDash(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func orDashOK(v int64, ok bool) string {
	if !ok {
		return "-"
	}
	return strconv.FormatInt(v, 10)
}

func orDashString(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// committedPtr returns a pointer to the partition's committed offset, or
// nil if it has none.
func committedPtr(committed map[string]map[int32]int64, topic string, partition int32) *int64 {
	if v, ok := committed[topic][partition]; ok {
		return &v
	}
	return nil
}
