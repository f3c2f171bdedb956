package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// parseStorage parses -storage, spelled as Offsets.Storage spells it.
func parseStorage(s string) (offsets.Kind, error) {
	for _, k := range []offsets.Kind{offsets.KindZookeeper, offsets.KindKafka, offsets.KindDual} {
		if s == k.String() {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%q: want zookeeper, kafka or dual", s)
}

// stores is what both offset stores hold for one group: partitions
// without a committed offset are left out. Kafka's group has the group's
// name, as the library's kafka and dual storage name it.
type stores struct {
	zk, kafka map[string]map[int32]int64
	kafkaErr  error // Kafka could not be read (a warning under zookeeper storage)
}

// readStores reads the group's offsets from ZooKeeper (nothing when the
// group has no node there) and from Kafka.
func (e *env) readStores(group string) (stores, error) {
	st := stores{zk: map[string]map[int32]int64{}}
	cg := e.kz.Consumergroup(group)
	exists, err := cg.Exists()
	if err != nil {
		return st, err
	}
	if exists {
		if st.zk, err = cg.FetchAllOffsets(); err != nil {
			return st, fmt.Errorf("offsets of group %s: %w", group, err)
		}
	}
	st.kafka, st.kafkaErr = e.kafkaGroupOffsets(group, nil)
	return st, nil
}

// inUse returns the offsets a member of the given storage starts from:
// ZooKeeper's, Kafka's, or under dual the higher of the two
// (offsets.StartOffset).
func (s stores) inUse(kind offsets.Kind) (map[string]map[int32]int64, error) {
	switch kind {
	case offsets.KindZookeeper:
		return s.zk, nil
	case offsets.KindKafka:
		return s.kafka, s.kafkaErr
	}
	if s.kafkaErr != nil {
		return nil, s.kafkaErr
	}
	out := make(map[string]map[int32]int64)
	for _, m := range []map[string]map[int32]int64{s.zk, s.kafka} {
		for topic, parts := range m {
			for p, off := range parts {
				if out[topic] == nil {
					out[topic] = make(map[int32]int64)
				}
				if cur, ok := out[topic][p]; !ok || off > cur {
					out[topic][p] = off
				}
			}
		}
	}
	return out, nil
}

// aheadWarnings names the partitions where the store not in use holds a
// higher offset than the one in use (a group moved between storages, or
// members with another Offsets.Storage), and under dual every partition
// where the two differ: a member starts at the higher one, so lowering
// one store alone changes nothing.
func aheadWarnings(kind offsets.Kind, zk, kafka map[string]map[int32]int64) []string {
	var w []string
	seen := make(map[string]bool)
	check := func(topic string, p int32) {
		key := fmt.Sprintf("%s/%d", topic, p)
		if seen[key] {
			return
		}
		seen[key] = true
		z, zok := zk[topic][p]
		k, kok := kafka[topic][p]
		switch {
		case kind == offsets.KindZookeeper && kok && (!zok || k > z):
			w = append(w, fmt.Sprintf("%s: Kafka holds %d, ahead of ZooKeeper's %s (is the group on kafka or dual storage?)", key, k, orDashOK(z, zok)))
		case kind == offsets.KindKafka && zok && (!kok || z > k):
			w = append(w, fmt.Sprintf("%s: ZooKeeper holds %d, ahead of Kafka's %s (is the group on zookeeper or dual storage?)", key, z, orDashOK(k, kok)))
		case kind == offsets.KindDual && (zok != kok || z != k):
			w = append(w, fmt.Sprintf("%s: ZooKeeper holds %s and Kafka %s; under dual storage the higher one wins", key, orDashOK(z, zok), orDashOK(k, kok)))
		}
	}
	for _, m := range []map[string]map[int32]int64{zk, kafka} {
		for topic, parts := range m {
			for p := range parts {
				check(topic, p)
			}
		}
	}
	sort.Strings(w)
	return w
}

// warnAhead writes aheadWarnings to w, one "warning:" line each.
func warnAhead(w io.Writer, kind offsets.Kind, s stores) {
	if s.kafkaErr != nil && kind == offsets.KindZookeeper {
		fmt.Fprintf(w, "warning: Kafka's offsets of the group could not be read to compare: %v\n", s.kafkaErr)
		return
	}
	for _, line := range aheadWarnings(kind, s.zk, s.kafka) {
		fmt.Fprintf(w, "warning: %s\n", line)
	}
}

// kafkaGroupOffsets reads the Kafka group's committed offsets: of the
// given partitions, or of every partition when which is nil. Partitions
// without a committed offset are left out.
func (e *env) kafkaGroupOffsets(group string, which map[string][]int32) (map[string]map[int32]int64, error) {
	admin, err := e.clusterAdmin()
	if err != nil {
		return nil, err
	}
	resp, err := admin.ListConsumerGroupOffsets(group, which)
	if err != nil {
		return nil, fmt.Errorf("offsets of Kafka group %s: %w", group, err)
	}
	blocks := resp.Blocks
	if blocks == nil {
		if g := resp.GetGroup(group); g != nil {
			blocks = g.Blocks
		}
	}
	out := make(map[string]map[int32]int64)
	var errs []error
	for topic, parts := range blocks {
		for p, b := range parts {
			if !errors.Is(b.Err, sarama.ErrNoError) {
				errs = append(errs, fmt.Errorf("offset of %s/%d in Kafka group %s: %w", topic, p, group, b.Err))
				continue
			}
			if b.Offset < 0 {
				continue // nothing committed
			}
			if out[topic] == nil {
				out[topic] = make(map[int32]int64)
			}
			out[topic][p] = b.Offset
		}
	}
	return out, errors.Join(errs...)
}

// ErrMembersRegistered is wrapped by the refusal to write Kafka's offsets
// (storage kafka or dual), or to delete a group's offsets, while members
// are registered in the ZooKeeper group: Kafka knows nothing of their
// claims, so -force does not override it (as offsets.ErrResetWhileMembersRun).
var ErrMembersRegistered = errors.New("members are registered in the group")

// registered returns the ids of the group's registered instances (none
// when the group does not exist).
func registered(cg *kazoo.Consumergroup) ([]string, error) {
	if ok, err := cg.Exists(); err != nil || !ok {
		return nil, err
	}
	instances, err := cg.Instances()
	if err != nil {
		return nil, fmt.Errorf("instances of group %s: %w", cg.Name, err)
	}
	ids := make([]string, len(instances))
	for i, inst := range instances {
		ids[i] = inst.ID
	}
	return ids, nil
}

// apply prints the changes and, with execute, writes them to the store of
// kind: ZooKeeper through fenced resets (applyZooKeeper), Kafka through
// the admin client, and under dual both, ZooKeeper first, so that the
// higher-wins start cannot undo a backward move of either.
func (e *env) apply(p planner, cg *kazoo.Consumergroup, kind offsets.Kind, changes []change, execute, force bool) error {
	if kind == offsets.KindZookeeper {
		return applyZooKeeper(p, cg, changes, execute, force)
	}
	sortChanges(changes)
	if err := fillOwners(cg, changes); err != nil {
		return err
	}
	if kind == offsets.KindDual {
		fmt.Fprintf(p.notes, "note: dual storage: both ZooKeeper and Kafka are set, since a member starts at the higher of the two\n")
	}
	if err := p.print(planDoc{Group: cg.Name, Storage: kind.String(), Execute: execute, Changes: changes}); err != nil {
		return err
	}
	ids, err := registered(cg)
	if err != nil {
		return err
	}
	var refusal error
	if len(ids) > 0 {
		refusal = fmt.Errorf("%w: group %s has %d (%s); with -storage %s the offsets are written to Kafka, which knows nothing of their claims: stop them first (-force does not apply)",
			ErrMembersRegistered, cg.Name, len(ids), strings.Join(ids, ", "), kind)
	}
	if !execute {
		if refusal != nil {
			fmt.Fprintf(p.notes, "note: -execute would refuse: %v\n", refusal)
		}
		fmt.Fprintf(p.notes, "dry run: %d offsets of group %s (storage %s) not written; add -execute to write them\n", len(changes), cg.Name, kind)
		return nil
	}
	if refusal != nil {
		return refusal
	}
	want := make(map[string]map[int32]int64)
	for _, c := range changes {
		if want[c.Topic] == nil {
			want[c.Topic] = make(map[int32]int64)
		}
		want[c.Topic][c.Partition] = c.After
	}
	if kind == offsets.KindDual {
		if err := cg.ResetOffsetsTo(want); err != nil {
			return fmt.Errorf("write offsets of group %s to ZooKeeper: %w", cg.Name, err)
		}
	}
	if err := e.commitKafka(cg.Name, want); err != nil {
		return err
	}
	s, err := e.readStores(cg.Name)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if s.kafkaErr != nil {
		return fmt.Errorf("read back: %w", s.kafkaErr)
	}
	if err := compareOffsets(want, s.kafka); err != nil {
		return fmt.Errorf("read back from Kafka group %s: %w", cg.Name, err)
	}
	if kind == offsets.KindDual {
		if err := compareOffsets(want, s.zk); err != nil {
			return fmt.Errorf("read back from ZooKeeper group %s: %w", cg.Name, err)
		}
	}
	fmt.Fprintf(p.notes, "wrote %d offsets of group %s (storage %s); read back: all match\n", len(changes), cg.Name, kind)
	return nil
}

// commitKafka commits offsets to the Kafka group through the admin client.
func (e *env) commitKafka(group string, want map[string]map[int32]int64) error {
	admin, err := e.clusterAdmin()
	if err != nil {
		return err
	}
	commit := make(map[string]map[int32]sarama.OffsetAndMetadata)
	for topic, parts := range want {
		commit[topic] = make(map[int32]sarama.OffsetAndMetadata)
		for p, off := range parts {
			commit[topic][p] = sarama.OffsetAndMetadata{Offset: off, LeaderEpoch: -1}
		}
	}
	resp, err := admin.AlterConsumerGroupOffsets(group, commit, nil)
	if err != nil {
		return fmt.Errorf("commit offsets of Kafka group %s: %w", group, err)
	}
	var errs []error
	for topic, parts := range resp.Errors {
		for p, kerr := range parts {
			if !errors.Is(kerr, sarama.ErrNoError) {
				errs = append(errs, fmt.Errorf("commit %s/%d to Kafka group %s: %w", topic, p, group, kerr))
			}
		}
	}
	return errors.Join(errs...)
}

// storedOffsets returns the group, the offsets its members of storage
// kind start from, and both stores as read. Under zookeeper storage the
// group must exist in ZooKeeper; under kafka or dual it may exist in Kafka
// only.
func (e *env) storedOffsets(group string, kind offsets.Kind) (*kazoo.Consumergroup, map[string]map[int32]int64, stores, error) {
	if kind == offsets.KindZookeeper {
		if _, err := e.existingGroup(group); err != nil {
			return nil, nil, stores{}, err
		}
	}
	s, err := e.readStores(group)
	if err != nil {
		return nil, nil, s, err
	}
	committed, err := s.inUse(kind)
	if err != nil {
		return nil, nil, s, err
	}
	return e.kz.Consumergroup(group), committed, s, nil
}

// topicsOf returns the group's topics: groupTopics when it exists in
// ZooKeeper, else those committed holds, sorted.
func (e *env) topicsOf(cg *kazoo.Consumergroup, committed map[string]map[int32]int64) ([]string, error) {
	if ok, err := cg.Exists(); err != nil {
		return nil, err
	} else if ok {
		return groupTopics(cg, committed)
	}
	out := make([]string, 0, len(committed))
	for t := range committed {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}
