package coord

import "github.com/zkgroup/kafka/internal/zkwatch"

// loopWatches are the loop's ZooKeeper watches and the channel their
// firing wakes it on. A session's watches die with it: the loop makes new
// ones after an expiry.
type loopWatches struct {
	set  *zkwatch.Set
	wake chan struct{}
}

func newLoopWatches() loopWatches {
	wake := make(chan struct{}, 1)
	return loopWatches{set: zkwatch.New(func() { poke(wake) }), wake: wake}
}

// poke leaves a wake-up token in wake unless one is there already.
func poke(wake chan<- struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}
