// Package monitor keeps a group's monitoring gauges current between the
// events that move them otherwise (commits, fence pauses): the session
// watch follows the ZooKeeper session's state into the session gauges,
// and the lag refresh asks the owned partitions' leaders for their
// high-water marks every interval and sets each partition's lag gauge.
//
// A Monitors is given what it reads and sets as a Deps of small
// interfaces; Kafka implements the lag refresh's two over a sarama
// client. Stop ends the lag refresh and waits for it: a ListOffsets
// request in flight is cancelled, not waited out, so a broker that does
// not answer never holds up the group's Close, and no lag gauge is set
// once Stop has returned.
//
// Not guaranteed: that a gauge is current. A partition whose leader
// cannot be asked keeps its gauge until a later round; failures are
// logged at debug level only. See docs/metrics.md.
package monitor
