// Package compat holds compatibility programs: tests written the way code
// for github.com/wvanbergen/kazoo-go and github.com/wvanbergen/kafka/consumergroup
// is written, with only the import paths changed. They fail to compile if
// an exported name or signature those packages had is missing or differs,
// and fail at run time if a behaviour such code relies on changed:
// comparing errors with ==, reading watch events as zk.Event, reading
// Registration().Timestamp as an int64, registering again on
// ErrInstanceNotRegistered.
//
// The signature checks and the wire-format checks are unit tests; the
// others run against the local stack (integration/stack.sh up) and are
// skipped under -short. Each integration test works inside a chroot of its
// own, so it creates no Kafka topic and leaves nothing behind.
package compat
