package fetch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// A busy round goes over the client's connection while a long poll is in
// flight on the own one. When the broker hangs, closeConns shuts the own
// socket (the long poll fails at once) but cannot shut the client's:
// Close must not wait for that round either, which the broker holds for
// the read timeout (30 s by default); its fetch ends once sarama's does.
func TestCloseConnsDoesNotWaitForARoundOverTheClientsConnection(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	closeBroker := sync.OnceFunc(broker.Close)
	defer closeBroker()
	mockFetchLeader(t, broker)
	busy, idle := newFetchers(mockFetchGroup(t, broker))
	broker.SetHandlerByMap(map[string]sarama.MockResponse{"FetchRequest": sarama.NewMockWrapper(nil)}) // hung
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polled := make(chan fetchResult, 1)
	go func() { polled <- idle.fetchUpTo(ctx, "t", 0, 0, 10) }()
	waitFor(t, "a long poll in flight on the own connection", func() bool { return heldFetches(broker) == 1 })
	fetched := make(chan fetchResult, 1)
	go func() { fetched <- busy.fetchUpTo(ctx, "t", 0, 0, 10) }()
	waitFor(t, "a busy round in flight on the client's connection", func() bool { return heldFetches(broker) == 2 })
	cancel() // the feeds stopped; then the group closes the engine
	closed := make(chan struct{})
	go func() {
		busy.closeConns()
		idle.closeConns()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Error("closeConns waited for the busy round over the client's connection, which the hung broker holds")
		closeBroker() // lets the round end
		<-closed
	}
	<-polled
	<-fetched
}
