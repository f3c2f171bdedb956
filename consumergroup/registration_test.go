package consumergroup

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/kazoo"
)

// TestRegistrationOffersSticky: the registration holds the subscription as
// kazoo writes it and, under StrategySticky (the default) only, the
// "assignment" list every member reads back; under a range strategy it is
// exactly the upstream format, with no key of ours.
func TestRegistrationOffersSticky(t *testing.T) {
	white, err := assign.NewWhiteList("orders.*")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		strategy AssignmentStrategy
		topics   []string
		filter   *assign.WhiteList
		offers   []assign.Strategy
		includes []string
	}{
		{"sticky, static", StrategySticky, []string{"a", "b"}, nil, []assign.Strategy{assign.Sticky}, []string{"a", "b"}},
		{"sticky, white list", StrategySticky, nil, white, []assign.Strategy{assign.Sticky}, []string{"orders-eu"}},
		{"range by leader", StrategyRangeByLeader, []string{"a"}, nil, nil, []string{"a"}},
		{"range by id", StrategyRangeByID, []string{"a"}, nil, nil, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NewConfig()
			cfg.Assignment.Strategy = tc.strategy
			cg := &ConsumerGroup{config: cfg, topics: tc.topics, filter: tc.filter}
			data, err := cg.registration()
			if err != nil {
				t.Fatal(err)
			}
			var reg kazoo.Registration
			if err := json.Unmarshal(data, &reg); err != nil {
				t.Fatal(err)
			}
			if got := assign.OfferedBy(&reg); !slices.Equal(got, tc.offers) {
				t.Errorf("offers %q, want %q", got, tc.offers)
			}
			if tc.offers == nil && strings.Contains(string(data), "assignment") {
				t.Errorf("a range registration %s has a key upstream does not write", data)
			}
			sub, err := assign.ParseSubscription(&reg)
			if err != nil {
				t.Fatal(err)
			}
			for _, topic := range tc.includes {
				if !sub.Includes(topic) {
					t.Errorf("%s does not subscribe to %q", data, topic)
				}
			}
			if reg.Version != kazoo.RegDefaultVersion || reg.Timestamp == 0 {
				t.Errorf("version and timestamp as kazoo writes them: %s", data)
			}
		})
	}
}
