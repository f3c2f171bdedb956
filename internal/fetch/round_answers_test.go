package fetch

import (
	"context"
	"errors"
	"testing"

	"github.com/IBM/sarama"
)

// starvedResponse is a fetch response in which the partitions of fed hold
// one record at offset 0 and the partitions of empty hold no records below
// a high-water mark of 5 (starved by the response's byte limit, or an
// empty record batch).
func starvedResponse(fed, empty []int32) *sarama.FetchResponse {
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	for _, p := range fed {
		res.AddRecordBatch("t", p, nil, sarama.StringEncoder("m"), 0, 0, false)
		res.GetBlock("t", p).HighWaterMarkOffset = 5
	}
	for _, p := range empty {
		res.AddError("t", p, sarama.ErrNoError)
		res.GetBlock("t", p).HighWaterMarkOffset = 5
	}
	return res
}

// starvedFetcher is a fetcher of a mock broker answering its fetch
// requests with responses, in order (the last one again and again), and
// leading partitions 0, 1 and 2 of t.
func starvedFetcher(t *testing.T, responses ...any) (*roundFetcher, *sarama.MockBroker) {
	broker := sarama.NewMockBroker(t, 1)
	t.Cleanup(broker.Close)
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, 1).SetLeader("t", 1, 1).SetLeader("t", 2, 1),
		"FetchRequest": sarama.NewMockSequence(responses...),
	})
	return newRoundFetcher(mockFetchGroup(t, broker)), broker
}

// runRound queues a want at offset 0 for each of partitions and runs the
// broker's rounds until every want is answered (the first round holds them
// all). It returns the answers by partition and the number of rounds.
func runRound(t *testing.T, f *roundFetcher, broker *sarama.MockBroker, partitions ...int32) (map[int32]fetchResult, int) {
	t.Helper()
	var wants []*fetchWant
	for _, p := range partitions {
		wants = append(wants, &fetchWant{ctx: context.Background(), topic: "t", partition: p, offset: 0, size: 1 << 20, limit: 100, done: make(chan fetchResult, 1)})
	}
	return runWants(t, f, broker, wants)
}

// runUntilAnswered runs broker id's round loop (the caller queued its
// wants and marked it running) until nothing is pending or starved, then
// waits for the hand-overs of its rounds and for the loops their answers
// start again (see handOver): every want is answered then.
func runUntilAnswered(f *roundFetcher, id int32) {
	f.run(id)
	f.rounds.Wait()
}

// runWants is runRound with wants of the caller's making (of t's
// partitions, at offset 0).
func runWants(t *testing.T, f *roundFetcher, broker *sarama.MockBroker, wants []*fetchWant) (map[int32]fetchResult, int) {
	t.Helper()
	leader, err := f.env.client.Leader("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.pending[1] = append(f.pending[1], wants...)
	f.leaders[1] = leader
	f.inFlight[1] = true
	f.mu.Unlock()
	runUntilAnswered(f, 1)
	answers := make(map[int32]fetchResult)
	for _, w := range wants {
		select {
		case r := <-w.done:
			r.parse() // as the waiting caller does (fetchFrom)
			answers[w.partition] = r
		default:
			t.Fatalf("partition %d not answered", w.partition)
		}
	}
	rounds := 0
	for _, rr := range broker.History() {
		if _, ok := rr.Request.(*sarama.FetchRequest); ok {
			rounds++
		}
	}
	return answers, rounds
}

// A round whose response's byte limit starves a partition (others got
// records, it got none below its high-water mark) fetches it again in the
// next round instead of answering errNoRecordsBelowMark, which sends a
// batch feed to sarama's partition consumer.
func TestFetcherFetchesStarvedPartitionAgain(t *testing.T) {
	f, broker := starvedFetcher(t,
		starvedResponse([]int32{0, 1}, []int32{2}),
		starvedResponse([]int32{2}, nil))
	answers, rounds := runRound(t, f, broker, 0, 1, 2)
	wantRecordEach(t, answers, 3)
	if rounds != 2 {
		t.Errorf("%d rounds, want 2", rounds)
	}
}

// A starved partition still without records once it is fetched alone
// holds an empty record batch (Kafka gives the only partition of a
// request its first batch): errNoRecordsBelowMark, after a bounded number
// of rounds. In a round where no partition got records, each goes alone at
// once (an empty batch may have taken Kafka's allowance from a partition
// whose first batch is larger than its fetch size).
func TestFetcherStarvedPartitionFallsBackWhenEmptyAlone(t *testing.T) {
	f, broker := starvedFetcher(t,
		starvedResponse([]int32{0}, []int32{1, 2}),
		starvedResponse([]int32{1}, []int32{2}))
	answers, rounds := runRound(t, f, broker, 0, 1, 2)
	if r := answers[2]; !errors.Is(r.err, errNoRecordsBelowMark) {
		t.Errorf("partition 2 answered %d messages, err %v; want %v", len(r.msgs), r.err, errNoRecordsBelowMark)
	}
	if r := answers[1]; r.err != nil || len(r.msgs) != 1 {
		t.Errorf("partition 1 answered %d messages, err %v; want its record", len(r.msgs), r.err)
	}
	if rounds != 3 { // all three; 1 and 2 starved; 2 alone
		t.Errorf("%d rounds, want 3", rounds)
	}

	f, broker = starvedFetcher(t, starvedResponse(nil, []int32{0, 1}))
	answers, rounds = runRound(t, f, broker, 0, 1)
	if r := answers[1]; !errors.Is(r.err, errNoRecordsBelowMark) || rounds != 3 {
		t.Errorf("a round nobody got records in: partition 1 answered %v after %d rounds; want %v after 3 (the round, then each alone)", r.err, rounds, errNoRecordsBelowMark)
	}
}

// Starved wants go to the next round as many as fit the response's limit
// at their fetch sizes; one starved twice goes alone.
func TestTakeStarved(t *testing.T) {
	ctx := context.Background()
	wants := []*fetchWant{
		{ctx: ctx, topic: "t", partition: 0, size: 400, starved: 1},
		{ctx: ctx, topic: "t", partition: 1, size: 400, starved: 1},
		{ctx: ctx, topic: "t", partition: 2, size: 400, starved: 1},
	}
	batch, rest := takeStarved(wants, 1000)
	if len(batch) != 2 || len(rest) != 1 {
		t.Fatalf("round of %d, %d left; want 2 and 1", len(batch), len(rest))
	}
	wants[2].starved = starvedAlone
	batch, rest = takeStarved([]*fetchWant{wants[2], wants[0], wants[1]}, 1000)
	if len(batch) != 1 || batch[0].partition != 2 || len(rest) != 2 {
		t.Fatalf("round of %d, %d left; want partition 2 alone", len(batch), len(rest))
	}
}
