package campaign

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Kind is a kind of fault.
type Kind string

// The faults a schedule draws from.
const (
	// KillMember kills a member with SIGKILL; it starts again after For.
	KillMember Kind = "kill-9"
	// PauseMember stops a member with SIGSTOP and continues it after For.
	PauseMember Kind = "sigstop"
	// CutClient cuts a member's link to ZooKeeper for For.
	CutClient Kind = "client-zk-cut"
	// CutFollower cuts an ensemble follower off from its peers for For.
	CutFollower Kind = "zk-follower-cut"
	// KillZKLeader kills the ZooKeeper leader; it starts again after For.
	KillZKLeader Kind = "zk-leader-kill"
	// RestartBroker kills a broker; it starts again after For.
	RestartBroker Kind = "broker-restart"
	// Join starts a new member.
	Join Kind = "join"
	// Leave closes a member cleanly.
	Leave Kind = "leave"
	// ResetOffsets resets a partition's offset through cmd/zkgroup-offsets.
	ResetOffsets Kind = "offset-reset"
)

// Kinds lists every kind, in the order reports print them.
var Kinds = []Kind{KillMember, PauseMember, CutClient, CutFollower, KillZKLeader, RestartBroker, Join, Leave, ResetOffsets}

// Step is one fault of a schedule. Victim is a member slot (member
// faults), a broker id from 1 (RestartBroker), the index of a follower in
// the ensemble's followers sorted by id (CutFollower) or a partition
// (ResetOffsets); For is how long the fault lasts.
type Step struct {
	At     time.Duration
	Kind   Kind
	Victim int
	For    time.Duration
}

func (s Step) String() string {
	return fmt.Sprintf("%6.2fs %-16s victim %d for %.2fs", s.At.Seconds(), s.Kind, s.Victim, s.For.Seconds())
}

// ScheduleConfig shapes the schedules Generate draws.
type ScheduleConfig struct {
	// Duration is how long faults are injected; every fault ends by then.
	Duration time.Duration
	// Members is how many members run at the start; MaxMembers caps joins.
	Members, MaxMembers int
	// Brokers and Partitions size the victims of broker faults and resets.
	Brokers    int
	Partitions int32
	// Kinds are the faults drawn from, evenly (nil: all but ResetOffsets).
	Kinds []Kind
	// Gap bounds the quiet time before each fault; Hold bounds how long
	// one lasts.
	MinGap, MaxGap, MinHold, MaxHold time.Duration
}

// Schedule is the faults of one run, drawn from Seed.
type Schedule struct {
	Seed  uint64
	Steps []Step
}

func (s Schedule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d faults\n", s.Seed, len(s.Steps))
	for _, st := range s.Steps {
		b.WriteString(st.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Generate draws the schedule of seed: every choice (kind, victim, time,
// length) comes from one math/rand/v2 source seeded by seed, so a seed
// replays exactly. Faults come one at a time; member faults pick among the
// members the schedule itself knows to be running, keeping at least one.
func Generate(seed uint64, cfg ScheduleConfig) Schedule {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	kinds := cfg.Kinds
	if kinds == nil {
		kinds = Kinds[:len(Kinds)-1]
	}
	live := make([]int, cfg.Members)
	for i := range live {
		live[i] = i
	}
	next := cfg.Members
	s := Schedule{Seed: seed}
	at := time.Duration(0)
	for {
		at += between(rng, cfg.MinGap, cfg.MaxGap)
		hold := between(rng, cfg.MinHold, cfg.MaxHold)
		if at+hold > cfg.Duration {
			return s
		}
		st := Step{At: at, Kind: kinds[rng.IntN(len(kinds))], For: hold}
		switch st.Kind {
		case KillMember, PauseMember, CutClient:
			st.Victim = live[rng.IntN(len(live))]
		case Leave:
			if len(live) < 2 {
				st.Kind, st.Victim = KillMember, live[rng.IntN(len(live))]
				break
			}
			i := rng.IntN(len(live))
			st.Victim, st.For = live[i], 0
			live = append(live[:i], live[i+1:]...)
		case Join:
			if next >= cfg.MaxMembers {
				st.Kind, st.Victim = PauseMember, live[rng.IntN(len(live))]
				break
			}
			st.Victim, st.For = next, 0
			live = append(live, next)
			next++
		case CutFollower:
			st.Victim = rng.IntN(2)
		case RestartBroker:
			st.Victim = 1 + rng.IntN(cfg.Brokers)
		case ResetOffsets:
			st.Victim, st.For = rng.IntN(int(cfg.Partitions)), 0
		}
		s.Steps = append(s.Steps, st)
		at += st.For
	}
}

// between draws a duration in [lo, hi], in whole milliseconds.
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	ms := rng.Int64N(int64((hi-lo)/time.Millisecond) + 1)
	return lo + time.Duration(ms)*time.Millisecond
}
