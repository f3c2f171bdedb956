package assign

import (
	"slices"

	"github.com/zkgroup/kafka/kazoo"
)

// What a registration offers, and which strategy a group uses with it: an
// instance configured with Sticky writes "assignment": ["sticky"], and
// Sticky is used only when every member's registration offers it
// (docs/assignment.md).

// Offered returns what an instance configured with s offers in its
// registration (the "assignment" list): Sticky for Sticky, nothing for
// the range strategies, which need no agreement beyond the configuration.
func (s Strategy) Offered() []string {
	if s == Sticky {
		return []string{string(Sticky)}
	}
	return nil
}

// OfferedBy returns the strategies reg offers ("assignment"); a
// registration written by upstream or by Kafka offers none.
func OfferedBy(reg *kazoo.Registration) []Strategy {
	if reg == nil {
		return nil
	}
	out := make([]Strategy, len(reg.Assignment))
	for i, s := range reg.Assignment {
		out[i] = Strategy(s)
	}
	return out
}

// InEffect is the strategy a group configured with s uses with members:
// Sticky only when every member offers it, RangeByLeader in its place
// otherwise; any other strategy as it is.
func InEffect(s Strategy, members []Member) Strategy {
	if s != Sticky {
		return s
	}
	for _, m := range members {
		if !slices.Contains(m.Offers, Sticky) {
			return RangeByLeader
		}
	}
	return Sticky
}
