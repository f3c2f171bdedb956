// Package campaign checks the histories of randomized fault campaigns
// against a consumer group: what a producer had acknowledged, what every
// member delivered (with the epoch of the claim it delivered under), every
// state of the committed offsets and of the owner nodes, and the faults.
//
// Check finds the anomalies of Jepsen's Kafka analysis (lost write, unseen,
// poll skip, nonmonotonic poll, inconsistent offsets, duplicate) and those
// of a ZooKeeper-coordinated group (split brain, zombie commit, commit
// regression, orphan, handoff skip, handoff rewind). Generate draws a
// replayable schedule of faults from a seed. integration/cmd/campaign runs
// both against a real stack; docs/campaign.md defines every class.
package campaign
