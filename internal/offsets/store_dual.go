package offsets

// dualStore commits every offset to ZooKeeper (fenced by the claim) and
// then to Kafka, and starts each claimed partition at the higher of the two
// stored offsets: the migration step between the other two stores. Kafka
// follows what ZooKeeper holds, catching up after a failure.
type dualStore struct {
	zk    *zookeeperStore
	kafka *kafkaStore
}

// Read implements Store: both stores, each as its own Read.
func (s *dualStore) Read(tp TopicPartition) (Stored, error) {
	st, err := s.zk.Read(tp)
	if err != nil {
		return st, err
	}
	k, err := s.kafka.Read(tp)
	if err != nil {
		return st, err
	}
	st.KafkaNext = k.KafkaNext
	return st, nil
}

// Commit implements Store: ZooKeeper first, then Kafka is given what
// ZooKeeper holds when it is due.
func (s *dualStore) Commit(o *Partition, next int64, dirty bool) error {
	if err := s.zk.Commit(o, next, dirty); err != nil {
		return err
	}
	return s.kafka.commitKafka(o, o.Tracker.CommittedOffset(), false)
}

// Due implements Store: ZooKeeper is written only when the offset moves;
// Kafka may be due anyway.
func (s *dualStore) Due(o *Partition) bool { return s.kafka.Due(o) }

// RewindAsReset implements Store: Kafka cannot be rewound under a claim,
// so neither is ZooKeeper; it does not apply.
func (s *dualStore) RewindAsReset(*Partition, int64) (bool, error) { return false, nil }

// Align implements Store: the store behind the start is brought up to it
// at once, ZooKeeper by committing the start as a new position (fenced,
// like any commit), Kafka by the catch-up every commit makes. So both
// stores agree from the claim on, whichever one members migrated so far
// wrote last.
func (s *dualStore) Align(o *Partition, st Stored) bool {
	start := st.Start()
	switch {
	case start < 0:
		return false // nothing stored anywhere: the start at Offsets.Initial writes both
	case st.ZkNext < start:
		o.RestartUncommitted(start)
		return true
	case st.KafkaNext < start:
		return true
	}
	return false
}

// Reset implements Store: Kafka's reset, which resets ZooKeeper as well.
func (s *dualStore) Reset() error { return s.kafka.Reset() }
