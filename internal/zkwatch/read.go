package zkwatch

import "github.com/zkgroup/kafka/kazoo"

// Read reads through read while key's watch is armed, and otherwise
// through watch, arming the watch it returns (also with a parse error, so
// a fix of the node fires it).
func Read[T any](s *Set, key string, read func() (T, error), watch func() (T, <-chan kazoo.Event, error)) (T, error) {
	if s.Armed(key) {
		return read()
	}
	v, ch, err := watch()
	if ch != nil {
		s.Arm(key, ch)
	}
	return v, err
}

// KnownRead is Read for a node only its watch can tell a change of: while
// the watch armed with the last successful read has not fired, that read's
// value is returned without asking ZooKeeper again. A change of the node
// fires the watch, which drops the value and wakes the loop, so the next
// read asks afresh: the value is as current as a read would have been
// when the loop woke. Reading every partition's leader on every wake-up
// cost one round trip per partition (about 0.5 s at 1,024 partitions, see
// BenchmarkIntegrationScaleHandoff); this costs none. After Forget, the
// next read asks again, under the same watch, and its value is known.
func KnownRead[T any](s *Set, key string, read func() (T, error), watch func() (T, <-chan kazoo.Event, error)) (T, error) {
	if v, ok := s.lookup(key); ok {
		return v.(T), nil
	}
	if n, ok := s.arming(key); ok {
		// Armed by a read that failed, or its value was forgotten: read
		// without a new watch, and know the value while that watch holds.
		v, err := read()
		if err == nil {
			s.knowIfArmed(key, n, v)
		}
		return v, err
	}
	v, ch, err := watch()
	switch {
	case ch != nil && err == nil:
		s.armKnown(key, ch, v)
	case ch != nil:
		s.Arm(key, ch)
	}
	return v, err
}
