package fetch

import (
	"context"
	"errors"
	"math"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// stuckDialer is a dialer whose dials hang until released or cancelled,
// as a dial to a host that went off the network hangs until
// Net.DialTimeout (30 s by default). Like net.Dialer (what sarama dials
// with when no proxy is set) it has DialContext.
type stuckDialer struct {
	entered chan struct{} // gets a value when a dial starts
	release chan struct{}
}

func (d *stuckDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

func (d *stuckDialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	select {
	case d.entered <- struct{}{}:
	default:
	}
	select {
	case <-d.release:
		return nil, errors.New("dial released")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// A round whose own connection is still being dialed holds the sarama
// Broker's lock in Open until the dial ends, and closeConns' Broker.Close
// and rounds.Wait wait for it: closeConns cancels the dial, so Close does
// not take up to Net.DialTimeout longer (30 s by default) for a round no
// feed waits for any more (as first built, it did).
func TestCloseConnsCancelsADialInProgress(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	cg := mockFetchGroup(t, broker)
	dialer := &stuckDialer{entered: make(chan struct{}, 1), release: make(chan struct{})}
	fconf := *cg.config.Config
	fconf.Net.Proxy.Enable = true
	fconf.Net.Proxy.Dialer = dialer
	cfg := &Config{Config: &fconf}
	cfg.Batches = true
	cg.config = cfg
	_, idle := newFetchers(cg)
	ctx, cancel := context.WithCancel(context.Background())
	fetched := make(chan fetchResult, 1)
	go func() { fetched <- idle.fetchSized(ctx, "t", 0, 0, math.MaxInt, 1<<20) }()
	<-dialer.entered
	cancel() // the feed stopped (the group is closing)
	<-fetched
	closed := make(chan struct{})
	go func() {
		idle.closeConns()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		close(dialer.release) // let the test end
		<-closed
		t.Fatal("closeConns still waiting 5 s after it was called, for a dial nobody needs any more (it waits up to Net.DialTimeout)")
	}
	close(dialer.release)
}
