package fetch

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// A Fetch response's own error code (v7 on) fails the whole round with
// it: its partitions are not read as answered empty, which would have its
// wants fetched again and again without a word.
func TestOwnConnectionTopLevelErrorFailsTheRound(t *testing.T) {
	addr, accepted := rawBroker(t)
	c := openOwnFetchConn(t, addr, time.Second)
	go func() {
		conn := <-accepted
		resp := emptyFetchResponse(readRequest(t, conn))
		binary.BigEndian.PutUint16(resp[12:], uint16(sarama.ErrFetchSessionIDNotFound)) // after size, correlation, throttle
		_, _ = conn.Write(resp)
	}()
	a, err := c.fetch(fetchRequestFields{maxBytes: 1 << 20}, oneWant)
	var kerr sarama.KError
	if !errors.As(err, &kerr) || kerr != sarama.ErrFetchSessionIDNotFound {
		t.Fatalf("round answered %v, %v; want the response's error %v", a, err, sarama.ErrFetchSessionIDNotFound)
	}
}
