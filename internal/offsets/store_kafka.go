package offsets

import (
	"fmt"
	"strings"
	"time"
)

// kafkaStore keeps offsets as Kafka's group offsets (GroupOffsets). Kafka
// knows no claims: every commit checks the claim right before its request
// goes out (kafkaFence), and what Kafka holds is read back once a commit
// round, so a late commit of an old owner is written over (kafkaDue).
type kafkaStore struct {
	env   *env
	owned func() map[string][]int32 // the tracked partitions, by topic
	// counts is set when Kafka is the only store: its commits are the
	// group's commits (metrics, verbose log).
	counts bool
}

// Read implements Store. The read takes no context (sarama's admin
// retries for up to Admin.Retry.Max times Net.ReadTimeout): it is waited
// for only until Deps.Closing, then abandoned with an error wrapping
// ErrGroupClosing.
func (s *kafkaStore) Read(tp TopicPartition) (Stored, error) {
	st := nothingStored
	next, err := UntilClosing(s.env.deps.Closing, func() (int64, error) {
		return s.env.deps.Kafka.Fetch(tp.Topic, tp.Partition)
	})
	if err != nil {
		return st, fmt.Errorf("read the offset committed to Kafka: %w", err)
	}
	st.KafkaNext = next
	return st, nil
}

// Commit implements Store: a pending offset is committed at once, and one
// already committed again when it is due (kafkaDue).
func (s *kafkaStore) Commit(o *Partition, next int64, dirty bool) error {
	if !dirty {
		// Written again only when kafkaRefresh has passed.
		return s.commitKafka(o, o.Tracker.CommittedOffset(), false)
	}
	return s.commitKafka(o, next, true)
}

// Due implements Store.
func (s *kafkaStore) Due(o *Partition) bool {
	return s.kafkaDue(o, o.Tracker.CommittedOffset(), time.Now(), true)
}

// RewindAsReset implements Store: Kafka knows no epochs, so a rewind
// cannot end the claim; it does not apply.
func (s *kafkaStore) RewindAsReset(*Partition, int64) (bool, error) { return false, nil }

// Align implements Store: one store is never behind itself.
func (s *kafkaStore) Align(*Partition, Stored) bool { return false }

// Reset implements Store (see resetWithKafka).
func (s *kafkaStore) Reset() error { return s.resetWithKafka() }

// resetWithKafka resets the group's offsets in Kafka and then in ZooKeeper,
// only while no other member is registered (ErrResetWhileMembersRun).
// Kafka goes first: a member that starts in between reads no Kafka offset
// once ZooKeeper's reset is made, so it cannot take the old one back to
// ZooKeeper; and the members are listed again afterwards, since one that
// registered meanwhile may have committed an old offset to Kafka after its
// deletion.
func (s *kafkaStore) resetWithKafka() error {
	storage, group := s.env.cfg.Kind.String(), s.env.cfg.Group
	others, err := s.env.deps.OtherMembers()
	if err != nil {
		return fmt.Errorf("consumergroup: reset offsets: list the members of group %s: %w", group, err)
	}
	if len(others) > 0 {
		return fmt.Errorf("%w: group %s has other members registered (%s): Offsets.ResetOffsets with Offsets.Storage %q "+
			"deletes the group's offsets in Kafka, which knows nothing of their claims; close them first",
			ErrResetWhileMembersRun, group, strings.Join(others, ", "), storage)
	}
	if err := s.env.deps.Kafka.Reset(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets in Kafka: %w", err)
	}
	if err := s.env.deps.Registry.ResetOffsets(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets in ZooKeeper (Kafka's are deleted): %w", err)
	}
	if others, err = s.env.deps.OtherMembers(); err != nil {
		return fmt.Errorf("consumergroup: reset offsets: list the members of group %s after the reset: %w", group, err)
	}
	if len(others) > 0 {
		return fmt.Errorf("%w: members of group %s registered while Offsets.ResetOffsets (Offsets.Storage %q) reset its offsets (%s): "+
			"the reset may not hold (one of them may have committed an offset from before it); close them and join again",
			ErrResetWhileMembersRun, group, storage, strings.Join(others, ", "))
	}
	return nil
}
