// Package worker holds the control state of a partition worker: the
// lifecycle table (Next: states × events) and the Inbox through which
// every other party talks to the worker.
//
// The worker itself runs one goroutine that takes each message from its
// Inbox, acts on it, and moves as Next says. Posting to an Inbox never
// blocks, so the manage loop, the claim watch, the committer and the
// delivery gate can post from any goroutine. Where each event is raised
// and the one function that handles it: docs/worker.md.
package worker
