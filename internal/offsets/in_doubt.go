package offsets

// InDoubt remembers the fenced commits of one partition whose reply was
// lost: ZooKeeper may or may not have applied them. They all expected the
// same version of the offset node, so at most one applied; a later
// conflict showing one of their values at the next version is our own
// write, not someone else's. See docs/in-doubt-commits.md.
//
// The zero value holds nothing in doubt. It is not safe for concurrent
// use: the owner guards it (the partition's commit mutex).
type InDoubt struct {
	expected int32   // the version every write in offsets expected (-1: a create)
	offsets  []int64 // the values they would have written
}

// Add records a commit of offset, expecting version expected, whose reply
// was lost. Writes expecting another version cannot apply any more: they
// are forgotten.
func (d *InDoubt) Add(offset int64, expected int32) {
	if len(d.offsets) > 0 && d.expected != expected {
		d.offsets = d.offsets[:0]
	}
	d.expected = expected
	d.offsets = append(d.offsets, offset)
}

// Ours reports whether a node holding stored at version is the result of
// one of the writes in doubt.
func (d *InDoubt) Ours(stored int64, version int32) bool {
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

// Clear forgets every write in doubt: the node's version is known again.
func (d *InDoubt) Clear() { d.offsets = d.offsets[:0] }
