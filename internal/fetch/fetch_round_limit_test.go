package fetch

import (
	"context"
	"errors"
	"testing"

	"github.com/IBM/sarama"
)

// TestWithinResponseLimit: a round takes wants while their fetch sizes fit
// the response limit, always at least one, and leaves the rest in order.
func TestWithinResponseLimit(t *testing.T) {
	want := func(offset int64, size int32) *fetchWant { return &fetchWant{offset: offset, size: size} }
	cases := []struct {
		name        string
		sizes       []int32
		limit       int32
		round, rest int
	}{
		{"all fit", []int32{10, 10, 10}, 30, 3, 0},
		{"split", []int32{10, 10, 10, 10}, 25, 2, 2},
		{"first alone larger", []int32{40, 10}, 25, 1, 1},
		{"empty", nil, 25, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var wants []*fetchWant
			for i, s := range c.sizes {
				wants = append(wants, want(int64(i), s))
			}
			round, rest := withinResponseLimit(wants, c.limit)
			if len(round) != c.round || len(rest) != c.rest {
				t.Fatalf("round %v, rest %v; want %d and %d wants", offsetsOf(round), offsetsOf(rest), c.round, c.rest)
			}
			for i, w := range append(round, rest...) {
				if w.offset != int64(i) {
					t.Fatalf("order %v changed", offsetsOf(append(round, rest...)))
				}
			}
		})
	}
}

// firstFetches is a want for each of partitions at offset 0 of t, with a
// fetch size of 1 MiB; first says they are feeds' first fetches.
func firstFetches(first bool, partitions ...int32) []*fetchWant {
	var wants []*fetchWant
	for _, p := range partitions {
		wants = append(wants, &fetchWant{ctx: context.Background(), topic: "t", partition: p, size: 1 << 20, limit: 100,
			first: first, done: make(chan fetchResult, 1)})
	}
	return wants
}

// riderFetcher is starvedFetcher for the batch feed, with a response limit
// of 2 MiB: a busy round counts 1 MiB, one partition at its 1 MiB fetch
// size.
// Its rounds go over an own connection (see holdRiders).
func riderFetcher(t *testing.T, responses ...any) (*roundFetcher, *sarama.MockBroker) {
	f, broker := starvedFetcher(t, responses...)
	f.env.config.Batches = true
	f.env.config.Consumer.Fetch.MaxBytes = 2 << 20
	f.own = newOwnConns(f.env)
	t.Cleanup(f.closeConns)
	return f, broker
}

// fetchRequests returns the fetch requests broker received, in order.
func fetchRequests(broker *sarama.MockBroker) []*sarama.FetchRequest {
	var out []*sarama.FetchRequest
	for _, rr := range broker.History() {
		if req, ok := rr.Request.(*sarama.FetchRequest); ok {
			out = append(out, req)
		}
	}
	return out
}

// Feeds' first fetches beyond a round's byte count ride along it, under a
// response limit of the round's count, instead of waiting a round each: a
// rebalance that gains hundreds of partitions fetches them in one round,
// not in rounds of a few dozen. Other wants still wait for their round.
func TestFirstFetchesRideAlongTheRound(t *testing.T) {
	f, broker := riderFetcher(t, starvedResponse([]int32{0, 1, 2}, nil))
	answers, rounds := runWants(t, f, broker, firstFetches(true, 0, 1, 2))
	wantRecordEach(t, answers, 3)
	if rounds != 1 {
		t.Errorf("%d rounds for three first fetches, want 1", rounds)
	}
	if reqs := fetchRequests(broker); len(reqs) > 0 && reqs[0].MaxBytes != 1<<20 {
		t.Errorf("a round with riders asks for %d bytes, want the round's count, %d", reqs[0].MaxBytes, 1<<20)
	}

	f, broker = riderFetcher(t, starvedResponse([]int32{0}, nil), starvedResponse([]int32{1}, nil), starvedResponse([]int32{2}, nil))
	if _, rounds := runWants(t, f, broker, firstFetches(false, 0, 1, 2)); rounds != 3 {
		t.Errorf("%d rounds for three later fetches of 1 MiB under a count of 1 MiB, want 3", rounds)
	}
	if reqs := fetchRequests(broker); len(reqs) > 0 && reqs[0].MaxBytes != 2<<20 {
		t.Errorf("a round without riders asks for %d bytes, want Consumer.Fetch.MaxBytes, %d", reqs[0].MaxBytes, 2<<20)
	}
}

// A rider the response's limit left without records is fetched again, and
// not counted as starved: it never goes alone, and never reads as an empty
// batch (errNoRecordsBelowMark) for being a rider.
func TestStarvedRiderIsFetchedAgain(t *testing.T) {
	f, broker := riderFetcher(t,
		starvedResponse([]int32{0, 1}, []int32{2}),
		starvedResponse([]int32{2}, nil))
	wants := firstFetches(true, 0, 1, 2)
	answers, rounds := runWants(t, f, broker, wants)
	wantRecordEach(t, answers, 3)
	if rounds != 2 {
		t.Errorf("%d rounds, want 2 (all three; the starved rider again)", rounds)
	}
	if wants[2].starved != 0 || wants[2].rides {
		t.Errorf("the starved rider: starved %d, rides %v; want 0 and false", wants[2].starved, wants[2].rides)
	}
}

// Over the client's connection sarama lists a request's partitions in no
// set order, so a rider may take a counted want's room: a counted want
// left without records in a round with riders is fetched again, not
// counted as starved (nor read as an empty batch).
func TestCountedWantShuffledOutByRidersIsFetchedAgain(t *testing.T) {
	f, broker := riderFetcher(t,
		starvedResponse([]int32{1, 2}, []int32{0}),
		starvedResponse([]int32{0}, nil))
	f.own = nil // rounds over the client's connection
	wants := firstFetches(true, 0, 1, 2)
	answers, rounds := runWants(t, f, broker, wants)
	wantRecordEach(t, answers, 3)
	if rounds != 2 {
		t.Errorf("%d rounds, want 2 (the three; the counted want again)", rounds)
	}
	if wants[0].starved != 0 {
		t.Errorf("the counted want left without records beside riders counted starved %d times, want 0", wants[0].starved)
	}

	// Round after round without records: its empty answer counts after
	// maxShuffledOut rounds, as a counted want's would.
	f, broker = riderFetcher(t, starvedResponse([]int32{1, 2}, []int32{0}), starvedResponse(nil, []int32{0}))
	f.own = nil
	answers, _ = runWants(t, f, broker, firstFetches(true, 0, 1, 2))
	if r := answers[0]; !errors.Is(r.err, errNoRecordsBelowMark) {
		t.Errorf("a counted want never given records: %d messages, err %v; want %v in the end", len(r.msgs), r.err, errNoRecordsBelowMark)
	}
}

// wantRecordEach fails t unless each of partitions 0 to n-1 was answered
// its one record, without an error.
func wantRecordEach(t *testing.T, answers map[int32]fetchResult, n int32) {
	t.Helper()
	for p := range n {
		if r := answers[p]; r.err != nil || len(r.msgs) != 1 {
			t.Errorf("partition %d answered %d messages, err %v; want its record", p, len(r.msgs), r.err)
		}
	}
}
