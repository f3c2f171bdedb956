package consumergroup

// inDoubt remembers the fenced commits of one partition whose outcome is
// unknown: the request went out, and the connection dropped (a leader
// election, a rolling restart, a network blip) before the reply came back.
// ZooKeeper may or may not have applied it.
//
// Every such commit expected the same version of the offset node (the one
// the partition holds), so at most one of them can have been applied, and
// if one was, the node is now at the next version holding its value. When a
// later commit is refused because the node's version moved, the stored
// value and version are compared with these writes: a match is our own
// write succeeding, not someone else's change, so the partition adopts the
// version and carries on, without a seek and without a conflict report.
//
// The value compared was read with the epoch still at our claim's after
// the read (kazoo reads the epoch after the offset node, see
// offsetConflict), so nobody claimed the partition and nobody reset it
// through this library (a reset bumps the epoch) since our claim. Only an
// unfenced writer setting exactly our value at exactly that version could
// be mistaken for us, and the outcome is then the same.
//
// Owned by the partition's commit mutex.
type inDoubt struct {
	expected int32   // the version every write in offsets expected (-1: a create)
	offsets  []int64 // the values they would have written
}

// add records a commit of offset, expecting expected, whose reply was lost.
// Writes expecting an older version cannot apply any more: they are
// forgotten.
func (d *inDoubt) add(offset int64, expected int32) {
	if len(d.offsets) > 0 && d.expected != expected {
		d.offsets = d.offsets[:0]
	}
	d.expected = expected
	d.offsets = append(d.offsets, offset)
}

// ours reports whether a node holding stored at version is the result of
// one of the writes in doubt.
func (d *inDoubt) ours(stored int64, version int32) bool {
	if len(d.offsets) == 0 || version != d.expected+1 {
		return false // a create (-1) leaves version 0, a set v leaves v+1
	}
	for _, o := range d.offsets {
		if o == stored {
			return true
		}
	}
	return false
}

// clear forgets every write in doubt: the node's version is known again.
func (d *inDoubt) clear() { d.offsets = d.offsets[:0] }
