package kazoo

// ConfirmSession returns nil once the ZooKeeper leader has vouched for this
// client's session: the leader was reachable and had not expired the session
// at some moment after the call began. Any error means no such answer came.
//
// A plain read (Exists, Get) does not do this. In an ensemble each server
// answers reads from its own copy of the tree, and a follower cut off from
// the leader keeps answering its clients for a while (up to syncLimit ticks)
// although the leader, which alone expires sessions, no longer hears of
// them: the leader may expire the session and let another client take its
// ephemeral nodes while the cut-off follower still answers every read.
//
// ConfirmSession sends a sync instead. A follower forwards a sync to the
// leader and answers it only when the leader's reply comes back, after every
// change the leader ordered before it; so a follower cut off from the leader
// cannot answer it, and if the leader had begun expiring the session, the
// session's close reaches the follower first and it drops the connection
// instead of answering. A standalone server or the leader itself answers
// from its own state, which is authoritative. The synced path does not
// matter; the chroot (which NewKazoo checked exists) is used.
func (kz *Kazoo) ConfirmSession() error {
	root := kz.conf.Chroot
	if root == "" {
		root = "/"
	}
	_, err := kz.conn.Sync(root)
	return znodeErr("sync", root, err)
}
