package fetch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"
)

// sarama registers a broker connection's traffic meters (request-rate,
// incoming-byte-rate, ...) in Config.MetricRegistry, shared by every
// connection, and closing a connection unregisters them. The fetcher's own
// connections are opened with the client's config; with its registry as
// it is, closing one (dropConn, a round that found its connection closed,
// Close) unregistered the meters the client's connections still mark, and
// the user's registry showed the own connections' traffic only. They get
// the registry wrapped so that nothing is unregistered (keptRegistry).

// unregisterRecorder is a metrics.Registry that notes the names
// unregistered from it.
type unregisterRecorder struct {
	metrics.Registry
	mu   sync.Mutex
	gone []string
}

func (r *unregisterRecorder) Unregister(name string) {
	r.mu.Lock()
	r.gone = append(r.gone, name)
	r.mu.Unlock()
	r.Registry.Unregister(name)
}

// The client's connections mark request-rate in the registry; the tests
// run with metrics.UseNilMetrics (see TestMain), so what is checked is
// that nothing unregisters it from the user's registry while the client
// runs.
func TestDroppedOwnConnKeepsClientMetrics(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	mockFetchLeader(t, broker)
	cg := mockFetchGroup(t, broker) // the client dials directly
	if _, err := cg.client.Leader("t", 0); err != nil {
		t.Fatal(err)
	}
	reg := &unregisterRecorder{Registry: cg.config.Config.MetricRegistry} // the client's registry
	if reg.Get("request-rate") == nil {
		t.Fatal("the client registered no request-rate")
	}
	proxy := &relayProxy{}
	defer proxy.closeAll()
	fconf := *cg.config.Config // the fetchers' config: the same registry, a proxy to reap with
	fconf.MetricRegistry = reg
	fconf.Net.Proxy.Enable = true
	fconf.Net.Proxy.Dialer = proxy
	cg.config = &Config{Config: &fconf} // Fetch.Batches false
	busy, idle := newFetchers(cg)
	defer idle.closeConns()
	defer busy.closeConns()
	ctx := context.Background()
	if r := busy.fetchUpTo(ctx, "t", 0, 0, 10); r.err != nil {
		t.Fatal(r.err)
	}
	proxy.reap(0) // the broker closes the busy connection, idle since
	time.Sleep(50 * time.Millisecond)
	if r := busy.fetchUpTo(ctx, "t", 0, 0, 10); r.err != nil {
		t.Fatalf("fetch after the idle close: %v", r.err)
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for _, name := range reg.gone {
		if name == "request-rate" {
			t.Fatalf("request-rate, a meter the client's connections mark, was unregistered from Config.MetricRegistry while the client runs "+
				"(closing the busy fetcher's dropped own connection; unregistered: %v): the user's registry loses the client's traffic", reg.gone)
		}
	}
}
