package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/zkgroup/kafka/internal/offsets"
)

// deletion is one stored offset delete removes.
type deletion struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Store     string `json:"store"` // zookeeper or kafka
	Offset    int64  `json:"offset"`
}

// deleteDoc is the -json form of delete's plan.
type deleteDoc struct {
	Group     string     `json:"group"`
	Storage   string     `json:"storage"`
	Execute   bool       `json:"execute"`
	Deletions []deletion `json:"deletions"`
}

// cmdDelete deletes every committed offset of a group in the stores its
// storage names, as Offsets.ResetOffsets does: ZooKeeper's through kazoo's
// fenced reset (each deletion bumps the partition's epoch), Kafka's first
// under kafka and dual storage. It refuses while members are registered.
func cmdDelete(args []string, out, errOut io.Writer) error {
	c := newCLI("delete", "delete -group G [-storage S] [-json] [-execute]").withStorage()
	execute := c.fs.Bool("execute", false, "delete the offsets (default: dry run)")
	asJSON := c.fs.Bool("json", false, "print the plan as JSON (notes go to standard error)")
	if err := c.parse(args, 0, 0); err != nil {
		return err
	}
	e, err := c.connect()
	if err != nil {
		return err
	}
	defer e.close()
	p := newPlanner(out, errOut, *asJSON)
	s, err := e.readStores(c.group)
	if err != nil {
		return err
	}
	doc := deleteDoc{Group: c.group, Storage: c.storage.String(), Execute: *execute, Deletions: []deletion{}}
	add := func(store string, m map[string]map[int32]int64) {
		for topic, parts := range m {
			for part, off := range parts {
				doc.Deletions = append(doc.Deletions, deletion{Topic: topic, Partition: part, Store: store, Offset: off})
			}
		}
	}
	// Every storage resets ZooKeeper's offsets (Store.Reset); kafka and
	// dual Kafka's as well.
	add("zookeeper", s.zk)
	if c.storage != offsets.KindZookeeper {
		if s.kafkaErr != nil {
			return s.kafkaErr
		}
		add("kafka", s.kafka)
	}
	sort.Slice(doc.Deletions, func(i, j int) bool {
		a, b := doc.Deletions[i], doc.Deletions[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Store > b.Store
	})
	if err := printDeletions(p, doc); err != nil {
		return err
	}
	cg := e.kz.Consumergroup(c.group)
	ids, err := registered(cg)
	if err != nil {
		return err
	}
	var refusal error
	if len(ids) > 0 {
		refusal = fmt.Errorf("%w: group %s has %d (%s); stop them before deleting its offsets",
			ErrMembersRegistered, c.group, len(ids), strings.Join(ids, ", "))
	}
	if !*execute {
		if refusal != nil {
			fmt.Fprintf(p.notes, "note: -execute would refuse: %v\n", refusal)
		}
		fmt.Fprintf(p.notes, "dry run: %d offsets of group %s (storage %s) not deleted; add -execute to delete them\n", len(doc.Deletions), c.group, c.storage)
		return nil
	}
	if refusal != nil {
		return refusal
	}
	deps := offsets.Deps{
		Registry:     offsets.KazooRegistry(cg, nil),
		OtherMembers: func() ([]string, error) { return registered(cg) },
	}
	if c.storage != offsets.KindZookeeper {
		ko, err := offsets.NewKafkaOffsets(e.client, offsets.KafkaConfig{Group: c.group})
		if err != nil {
			return err
		}
		deps.Kafka = ko
	}
	// The library's own reset: the same order, fencing and member checks
	// as Offsets.ResetOffsets.
	if err := offsets.NewStore(offsets.Config{Kind: c.storage, Group: c.group}, deps).Reset(); err != nil {
		return err
	}
	after, err := e.readStores(c.group)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	left := count(after.zk)
	if c.storage != offsets.KindZookeeper {
		if after.kafkaErr != nil {
			return fmt.Errorf("read back: %w", after.kafkaErr)
		}
		left += count(after.kafka)
	}
	if left > 0 {
		return fmt.Errorf("read back: %d offsets of group %s are still stored (a member committed since?)", left, c.group)
	}
	fmt.Fprintf(p.notes, "deleted %d offsets of group %s (storage %s, fenced); read back: none left\n", len(doc.Deletions), c.group, c.storage)
	return nil
}

func printDeletions(p planner, doc deleteDoc) error {
	if p.json {
		enc := json.NewEncoder(p.out)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	w := tabwriter.NewWriter(p.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "TOPIC\tPARTITION\tSTORE\tOFFSET")
	for _, d := range doc.Deletions {
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\n", d.Topic, d.Partition, d.Store, d.Offset)
	}
	return w.Flush()
}
