package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// Consume of a static member whose id another live instance holds waits
// for the id; each case ends that wait half a second in and checks that
// Consume returns at once with the error the ending promises, rather than
// after the whole wait for the id.
func TestIntegrationStaticWaitForTheIDEnds(t *testing.T) {
	testenv.Integration(t)
	cases := []struct {
		name string
		// end ends the wait: it cancels Consume's context or closes the group.
		end  func(hg *consumergroup.HandlerGroup, cancel context.CancelFunc)
		want error
		why  string
	}{{
		// As Consume promises ("until ctx is done"): it returns the
		// context's error.
		name: "ContextEnds",
		end:  func(_ *consumergroup.HandlerGroup, cancel context.CancelFunc) { cancel() },
		want: context.Canceled,
		why:  "the context's error: its end stops the wait for the id",
	}, {
		// Consume returns sarama.ErrClosedConsumerGroup, and Close does not
		// wait out the id.
		name: "Close",
		end:  func(hg *consumergroup.HandlerGroup, _ context.CancelFunc) { _ = hg.Close() },
		want: sarama.ErrClosedConsumerGroup,
		why:  "sarama.ErrClosedConsumerGroup: Close ends the wait for the id",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topic := newTopic(t, 1)
			group := testenv.UniqueName("static-wait")
			first := join(t, group, []string{topic}, staticConfig("s0", 10*time.Second))
			done := consume(t, 0, first, newLedger())
			defer func() { closeGroup(t, first); <-done }()

			cfg := staticConfig("s0", 10*time.Second)
			cfg.Zookeeper.Timeout = 4 * time.Second
			hg, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer hg.Close() // a second Close, after the case's, only returns AlreadyClosing
			go func() {
				for range hg.Errors() {
				}
			}()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			time.AfterFunc(500*time.Millisecond, func() { tc.end(hg, cancel) })
			started := time.Now()
			err = hg.Consume(ctx, []string{topic}, &ledgerHandler{id: 1, l: newLedger()})
			t.Logf("Consume returned after %s: %v", time.Since(started).Round(time.Millisecond), err)
			if !errors.Is(err, tc.want) {
				t.Errorf("Consume = %v, want %s", err, tc.why)
			}
		})
	}
}
