package claim

import "sync/atomic"

// Stats is a snapshot of a Claimer's counters, summed over every partition
// it has claimed since New.
type Stats struct {
	Attempts        uint64 // TryClaim calls
	Successes       uint64 // Claim calls that returned a claim
	Failures        uint64 // Claim calls that returned a *Error
	WatchWakeups    uint64 // attempts started because an owner watch fired
	BackoffWakeups  uint64 // attempts started because a backoff timer fired
	VanishedOwners  uint64 // times the owner was gone between TryClaim and WatchOwner (or TryClaim saw ErrNoNode)
	Releases        uint64 // Release calls that succeeded
	ReleaseFailures uint64 // Release calls that returned an error
}

type counters struct {
	attempts, successes, failures, watchWakeups, backoffWakeups,
	vanishedOwners, releases, releaseFailures atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Attempts:        c.attempts.Load(),
		Successes:       c.successes.Load(),
		Failures:        c.failures.Load(),
		WatchWakeups:    c.watchWakeups.Load(),
		BackoffWakeups:  c.backoffWakeups.Load(),
		VanishedOwners:  c.vanishedOwners.Load(),
		Releases:        c.releases.Load(),
		ReleaseFailures: c.releaseFailures.Load(),
	}
}
