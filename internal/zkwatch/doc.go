// Package zkwatch turns ZooKeeper's one-shot watches into one wake-up for
// a loop that re-reads what it watches.
//
// A Set remembers which keys have a watch armed and re-arms a key only
// after its watch fired, so a loop that reads the same nodes on every
// wake-up never piles up watches on one znode. A watch that fires, or
// whose channel closes with the connection, disarms its key and calls the
// Set's fired function; the next read through Read arms it again. Close
// ends the goroutines still waiting, for a connection that never closes
// its watch channels.
//
// Not guaranteed: that a change is seen. A watch can be lost with its
// session; callers re-read on a timer as well, and make a new Set after a
// session expiry.
package zkwatch
