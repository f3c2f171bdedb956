package fetch

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// A round whose every want moved to another leader before it went out
// (see stillLed) sends nothing, and gives its own connection back: the
// long poll it counted would otherwise stay in flight there for good, so
// the connection would never close when idle and every busy round to
// that broker would go over the client's connection.
func TestRoundOfMovedWantsReleasesItsConnection(t *testing.T) {
	b1 := sarama.NewMockBroker(t, 1)
	defer b1.Close()
	b2 := sarama.NewMockBroker(t, 2)
	defer b2.Close()
	answering(t, b1, "old", 200*time.Millisecond) // the first round stays in flight
	answering(t, b2, "new", 0)
	client := &switchingClient{leader: brokerFor(b1)}
	e := &env{config: &Config{Config: mockConfig()}, client: client, log: slog.New(slog.DiscardHandler)}
	busy, idle := newFetchers(e)
	idle.own.idleClose = 20 * time.Millisecond
	defer busy.closeConns()
	defer idle.closeConns()

	first := make(chan fetchResult, 1)
	go func() { first <- idle.fetchUpTo(context.Background(), "t", 0, 0, 10) }()
	waitRoundInFlight(t, idle, "first round in flight")
	second := make(chan fetchResult, 1)
	go func() { second <- idle.fetchUpTo(context.Background(), "t", 1, 0, 10) }()
	waitFor(t, "second want queued", func() bool {
		idle.mu.Lock()
		defer idle.mu.Unlock()
		return len(idle.pending[1]) == 1
	})
	client.set(brokerFor(b2)) // the second want's round to broker 1 holds no want
	if r := <-first; r.err != nil {
		t.Fatalf("first round: %v", r.err)
	}
	if r := <-second; r.err != nil || len(r.msgs) != 1 || string(r.msgs[0].Value) != "new" {
		t.Fatalf("second want: %d messages, err %v; want the new leader's", len(r.msgs), r.err)
	}
	waitFor(t, "idle close of the own connection to broker 1", func() bool {
		idle.own.mu.Lock()
		defer idle.own.mu.Unlock()
		_, open := idle.own.conns[1]
		return !open
	})
}
