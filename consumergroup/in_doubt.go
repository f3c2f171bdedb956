package consumergroup

// inDoubt remembers the fenced commits of one partition whose reply was
// lost: ZooKeeper may or may not have applied them. They all expected the
// same version, so at most one applied; a later conflict showing one of
// their values at the next version is our own write. See
// docs/in-doubt-commits.md.
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
