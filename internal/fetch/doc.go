// Package fetch reads claimed partitions' messages from Kafka.
//
// A Source is one partition's messages from one offset on. Partition.Open
// picks how they are read: with Config.Batches, and where direct fetches
// apply (record batches read uncommitted from the leader, no RackID), a
// batch feed fetches whole record batches in the background and hands
// them out one at a time; otherwise sarama's partition consumer reads
// them, opening in the background while a first batch fetched directly
// goes out. A Source that fails (a background open, a feed error that
// retrying does not mend) ends, and the partition's next Open reads
// through sarama's partition consumer, so a partition is never stuck on
// the faster path. Every Source keeps the partition's high-water mark.
//
// The Engine holds what partitions share: two round fetchers that
// coalesce fetches into one request per broker (one answered at once, one
// long-polled) over one connection of their own per broker, closed after
// a minute unused, whose Fetch responses they decode themselves, straight
// into messages (sarama's decoder only reads the client's connection),
// and a budget bounding the bytes fetched ahead. Told of a moved leader
// (LeadersMoved, from the group's topic source), it refreshes the topic's
// metadata and sends the partition's fetches to the new leader at once. Closing it shuts those connections at once.
//
// What it keeps: a Source hands out every message from its start offset
// in order, skipping nothing; an offset out of range is never skipped
// silently (a stored one: the caller's OutOfRangeFunc decides; a position
// read through: a *TruncationError or *RetentionError says where to
// resume); a stopped Source
// fetches nothing more. It does not track, commit or fence offsets, and
// it does not pause: its reader holds messages back instead. See
// docs/batch-feed.md.
package fetch
