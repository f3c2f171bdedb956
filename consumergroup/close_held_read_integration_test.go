package consumergroup

import (
	"encoding/binary"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// apiOffsetFetch is the api key of OffsetFetch requests.
const apiOffsetFetch = 9

// stallingDialer dials plainly; while stall is set, a write of an
// OffsetFetch request blocks (a coordinator that stopped reading, a link
// gone quiet) until release is closed.
type stallingDialer struct {
	stall   atomic.Bool
	stalled chan struct{} // gets a value when a write stalls
	release chan struct{}
}

type stallingConn struct {
	net.Conn
	d *stallingDialer
}

func (c stallingConn) Write(p []byte) (int, error) {
	if c.d.stall.Load() && len(p) >= 6 && int16(binary.BigEndian.Uint16(p[4:6])) == apiOffsetFetch {
		select {
		case c.d.stalled <- struct{}{}:
		default:
		}
		<-c.d.release
	}
	return c.Conn.Write(p)
}

func (d *stallingDialer) Dial(network, addr string) (net.Conn, error) {
	c, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	return stallingConn{c, d}, nil
}

// f119aee moved the commit round's read of what Kafka holds (heldOffsets)
// out of its mutex and made its waits end at closeExpired. But
// closeExpired is closed only when awaitStop's bound runs out: when the
// partitions stop in time (a clean Close), Close goes on to
// offsetManager.Close, which waits for the commit loop (<-om.closed), and
// the commit loop is waiting, in hasWork -> kafkaDue -> heldOffsets.get,
// for a read nothing ends but sarama (Net.ReadTimeout, plus a coordinator
// lookup without deadline). Close then exceeds ProcessingTimeout + 1.5 x
// the session timeout.
func TestIntegrationCloseDoesNotWaitForCommitLoopHeldRead(t *testing.T) {
	f := newOrphanFixture(t, 1)
	cfg := fenceTestConfig()
	cfg.Offsets.Storage = OffsetStorageKafka
	d := &stallingDialer{stalled: make(chan struct{}, 1), release: make(chan struct{})}
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = d
	released := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-released:
		default:
			close(d.release)
		}
	})
	x := f.join(cfg)
	f.waitOwned(20*time.Second, 1, "joined", x)
	time.Sleep(2 * time.Second) // consumed, committed; commit rounds read Kafka's offsets
	d.stall.Store(true)
	select {
	case <-d.stalled:
	case <-time.After(10 * time.Second):
		t.Fatal("no commit round read Kafka's offsets")
	}
	bound := cfg.Offsets.ProcessingTimeout + 3*cfg.Zookeeper.Timeout/2
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- x.Close() }()
	select {
	case err := <-done:
		t.Logf("Close took %v (bound %v): %v", time.Since(start), bound, err)
	case <-time.After(bound + 2*time.Second):
		t.Errorf("Close still running %v after it was called, over its bound ProcessingTimeout + 1.5 x session timeout = %v (+2 s slack): "+
			"it waits for the commit loop's read of Kafka's offsets", time.Since(start).Round(time.Millisecond), bound)
		buf := make([]byte, 1<<20)
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "(*ConsumerGroup).Close") || strings.Contains(g, "commitLoop") {
				t.Logf("%s", g)
			}
		}
		close(d.release)
		close(released)
		<-done
	}
}
