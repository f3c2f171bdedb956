package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/zkgroup/kafka/internal/offsets"
)

// GroupState is the -json output of show.
type GroupState struct {
	Group      string           `json:"group"`
	Storage    string           `json:"storage"` // the store Committed was read from (-storage)
	Instances  []string         `json:"instances"`
	Partitions []PartitionState `json:"partitions"`
	// Warnings name partitions where the other store is ahead (or under
	// dual, where the two differ).
	Warnings []string `json:"warnings,omitempty"`
}

// PartitionState is one partition of a group, as show reports it.
type PartitionState struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed *int64 `json:"committed"`  // next offset to consume; null if none is committed
	HighWater *int64 `json:"high_water"` // offset of the next message produced; null if unknown
	Lag       *int64 `json:"lag"`        // HighWater - Committed; null if either is unknown
	Owner     string `json:"owner,omitempty"`
	Error     string `json:"error,omitempty"` // why HighWater is unknown
}

// cmdShow prints each partition of a group: committed offset, owner,
// high-water mark and lag.
func cmdShow(args []string, out, errOut io.Writer) error {
	c := newCLI("show", "show -group G [-storage S] [-json]").withStorage()
	asJSON := c.fs.Bool("json", false, "print JSON instead of a table")
	if err := c.parse(args, 0, 0); err != nil {
		return err
	}
	e, err := c.connect()
	if err != nil {
		return err
	}
	defer e.close()
	st, err := e.groupState(c.group, c.storage)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	fmt.Fprintf(out, "group %s (storage %s): %d registered instances%s\n", st.Group, st.Storage, len(st.Instances), listSuffix(st.Instances))
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "TOPIC\tPARTITION\tCOMMITTED\tHIGH-WATER\tLAG\tOWNER\tNOTE")
	for _, p := range st.Partitions {
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", p.Topic, p.Partition, orDash(p.Committed), orDash(p.HighWater), orDash(p.Lag), orDashString(p.Owner), p.Error)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, line := range st.Warnings {
		fmt.Fprintf(out, "warning: %s\n", line)
	}
	return nil
}

func listSuffix(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return " (" + strings.Join(ids, ", ") + ")"
}

// groupState reads one group's instances and owners from ZooKeeper, its
// offsets from the store of kind, and its partitions' high-water marks
// from Kafka.
func (e *env) groupState(group string, kind offsets.Kind) (GroupState, error) {
	st := GroupState{Group: group, Storage: kind.String(), Instances: []string{}, Partitions: []PartitionState{}}
	cg, committed, stored, err := e.storedOffsets(group, kind)
	if err != nil {
		return st, err
	}
	if stored.kafkaErr != nil && kind == offsets.KindZookeeper {
		st.Warnings = append(st.Warnings, fmt.Sprintf("Kafka's offsets of the group could not be read to compare: %v", stored.kafkaErr))
	} else {
		st.Warnings = aheadWarnings(kind, stored.zk, stored.kafka)
	}
	ids, err := registered(cg)
	if err != nil {
		return st, err
	}
	st.Instances = append(st.Instances, ids...)
	if len(committed) == 0 && kind == offsets.KindKafka && len(ids) == 0 {
		if ok, err := cg.Exists(); err == nil && !ok {
			return st, fmt.Errorf("consumer group %q has no offsets in Kafka and no node in ZooKeeper", group)
		}
	}
	topics, err := e.topicsOf(cg, committed)
	if err != nil {
		return st, err
	}
	exists, err := cg.Exists()
	if err != nil {
		return st, err
	}
	for _, topic := range topics {
		ids, err := e.partitions(topic)
		missing := errors.Is(err, errNoTopic)
		if err != nil && !missing {
			return st, err
		}
		// Partitions with a committed offset that the topic no longer has
		// are listed too.
		seen := make(map[int32]bool)
		for _, p := range ids {
			seen[p] = true
		}
		for p := range committed[topic] {
			if !seen[p] {
				ids = append(ids, p)
				seen[p] = true
			}
		}
		sortInt32(ids)
		for _, p := range ids {
			row := PartitionState{Topic: topic, Partition: p, Committed: committedPtr(committed, topic, p)}
			if exists {
				owner, err := cg.PartitionOwner(topic, p)
				if err != nil {
					return st, fmt.Errorf("owner of %s/%d: %w", topic, p, err)
				}
				if owner != nil {
					row.Owner = owner.ID
				}
			}
			switch hw, err := e.highWater(topic, p, missing); {
			case err != nil:
				row.Error = err.Error()
			default:
				row.HighWater = &hw
				if row.Committed != nil {
					lag := hw - *row.Committed
					row.Lag = &lag
				}
			}
			st.Partitions = append(st.Partitions, row)
		}
	}
	return st, nil
}

func (e *env) highWater(topic string, partition int32, missing bool) (int64, error) {
	if missing {
		return 0, errors.New("topic does not exist in the cluster")
	}
	return e.client.GetOffset(topic, partition, -1)
}
