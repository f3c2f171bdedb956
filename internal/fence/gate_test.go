package fence

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/IBM/sarama"
)

// sendAsync runs g.send in its own goroutine and returns a channel that
// receives its result.
func sendAsync(ctx context.Context, g *Gate, out chan<- *sarama.ConsumerMessage, m *sarama.ConsumerMessage) <-chan bool {
	res := make(chan bool, 1)
	go func() { delivered, _ := g.SendTo(ctx.Done(), Chan(out), m, nil); res <- delivered }()
	return res
}

// mustPend fails t if send already returned (call it after synctest.Wait:
// the sender is then durably blocked or done).
func mustPend(t *testing.T, res <-chan bool) {
	t.Helper()
	select {
	case v := <-res:
		t.Fatalf("send returned %v, want it still blocked", v)
	default:
	}
}

func TestDeliveryGateSetReportsChanges(t *testing.T) {
	g := NewGate()
	if g.Paused() {
		t.Fatal("a new gate is paused")
	}
	if g.Set(false) {
		t.Error("set(false) on an open gate reported a change")
	}
	if !g.Set(true) {
		t.Error("set(true) on an open gate reported no change")
	}
	if g.Set(true) {
		t.Error("set(true) on a paused gate reported a change")
	}
	if !g.Paused() {
		t.Fatal("not paused after set(true)")
	}
	resumeC := g.cur.Load().resumeC
	select {
	case <-resumeC:
		t.Error("resumeC is closed while paused")
	default:
	}
	if !g.Set(false) {
		t.Error("set(false) on a paused gate reported no change")
	}
	if g.Paused() {
		t.Fatal("paused after set(false)")
	}
	select {
	case <-resumeC:
	default:
		t.Error("resumeC is not closed once open")
	}
}

func TestDeliveryGateOpenDelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate()
		out := make(chan *sarama.ConsumerMessage)
		m := &sarama.ConsumerMessage{Offset: 7}
		res := sendAsync(t.Context(), g, out, m)
		synctest.Wait()
		mustPend(t, res) // nobody reads yet: send waits for the application
		if got := <-out; got != m {
			t.Fatalf("received %v, want %v", got, m)
		}
		if !<-res {
			t.Fatal("send returned false after the message was taken")
		}
	})
}

func TestDeliveryGateSendBlocksWhilePausedAndResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate()
		g.Set(true)
		out := make(chan *sarama.ConsumerMessage, 1) // a ready receiver: only the gate can hold the send
		m := &sarama.ConsumerMessage{Offset: 1}
		res := sendAsync(t.Context(), g, out, m)

		time.Sleep(time.Hour) // however long the pause lasts
		synctest.Wait()
		mustPend(t, res)
		if len(out) != 0 {
			t.Fatal("a message went out while the gate was paused")
		}

		g.Set(false)
		synctest.Wait()
		if !<-res {
			t.Fatal("send returned false after the gate reopened")
		}
		if got := <-out; got != m {
			t.Fatalf("received %v, want %v", got, m)
		}
	})
}

// A send already waiting for the application when the gate closes must not
// deliver while paused, even if the application starts reading.
func TestDeliveryGatePauseInterruptsWaitingSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate()
		interrupt := make(chan struct{})
		stop := g.Listen(func() { close(interrupt) }) // as a worker's pause event
		defer stop()
		out := make(chan *sarama.ConsumerMessage)
		m := &sarama.ConsumerMessage{Offset: 3}
		res := make(chan bool, 1)
		go func() {
			delivered, _ := g.SendTo(interrupt, Chan(out), m, nil)
			if !delivered { // interrupted by the pause: send again, as the worker does
				delivered, _ = g.SendTo(nil, Chan(out), m, nil)
			}
			res <- delivered
		}()
		synctest.Wait() // the send waits on out

		g.Set(true)
		synctest.Wait() // the send saw the pause

		got := make(chan *sarama.ConsumerMessage, 1)
		go func() { got <- <-out }()
		time.Sleep(time.Minute)
		synctest.Wait()
		mustPend(t, res)
		select {
		case x := <-got:
			t.Fatalf("message %v delivered while paused", x)
		default:
		}

		g.Set(false)
		if x := <-got; x != m {
			t.Fatalf("received %v, want %v", x, m)
		}
		if !<-res {
			t.Fatal("send returned false after delivering")
		}
	})
}

// A listener that stopped listening is not told of a pause.
func TestDeliveryGateListenStop(t *testing.T) {
	g := NewGate()
	told := 0
	stop := g.Listen(func() { told++ })
	g.Set(true)
	g.Set(false)
	stop()
	g.Set(true)
	if told != 1 {
		t.Errorf("listener told %d times, want once (before it stopped)", told)
	}
}

func TestDeliveryGateCancelWhilePaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate()
		g.Set(true)
		ctx, cancel := context.WithCancel(t.Context())
		out := make(chan *sarama.ConsumerMessage, 1)
		res := sendAsync(ctx, g, out, &sarama.ConsumerMessage{})
		synctest.Wait()
		mustPend(t, res)
		cancel()
		if <-res {
			t.Fatal("send returned true after its context was cancelled while paused")
		}
		if len(out) != 0 {
			t.Fatal("a message went out although the send was cancelled")
		}
	})
}

func TestDeliveryGateCancelWhileWaitingForReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		out := make(chan *sarama.ConsumerMessage) // nobody reads
		start := time.Now()
		if delivered, _ := g.SendTo(ctx.Done(), Chan(out), &sarama.ConsumerMessage{}, nil); delivered {
			t.Fatal("send returned true with nobody reading")
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Fatalf("send returned after %v, want exactly the 5s context timeout", d)
		}
	})
}

// Pausing and resuming repeatedly while a send waits must neither lose nor
// duplicate the message.
func TestDeliveryGateFlappingDeliversOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewGate()
		out := make(chan *sarama.ConsumerMessage, 2)
		g.Set(true)
		m := &sarama.ConsumerMessage{Offset: 9}
		res := sendAsync(t.Context(), g, out, m)
		for i := 0; i < 10; i++ {
			synctest.Wait()
			mustPend(t, res)
			g.Set(false)
			g.Set(true) // the sender may or may not have run in between
			synctest.Wait()
			if len(out) > 0 {
				break
			}
		}
		g.Set(false)
		if !<-res {
			t.Fatal("send returned false")
		}
		if len(out) != 1 {
			t.Fatalf("%d messages went out, want exactly 1", len(out))
		}
	})
}

// A process stopped past the fence's deadline may run a worker before the
// fence's timer goroutine: the gate must not hand out what the worker
// holds meanwhile. It pauses by itself at the moment PauseAt set, tells its
// listeners, and holds the message until the fence opens it again.
func TestGatePausesItselfPastItsDeadline(t *testing.T) {
	g := NewGate()
	told := make(chan struct{}, 1)
	defer g.Listen(func() { told <- struct{}{} })()
	g.PauseAt(time.Now().Add(-time.Millisecond)) // the timer has not fired yet
	out := make(chan *sarama.ConsumerMessage, 1) // a reader would take it at once
	interrupt := make(chan struct{})
	sent := make(chan bool, 1)
	go func() {
		delivered, _ := g.SendTo(interrupt, Chan(out), &sarama.ConsumerMessage{Offset: 7}, nil)
		sent <- delivered
	}()
	select {
	case <-told:
	case m := <-out:
		t.Fatalf("offset %d handed out past the deadline", m.Offset)
	case <-time.After(5 * time.Second):
		t.Fatal("the gate did not pause by itself past its deadline")
	}
	if !g.Paused() {
		t.Fatal("the gate is not paused")
	}
	g.PauseAt(time.Now().Add(time.Hour)) // the leader vouched again
	g.Set(false)
	if !<-sent {
		t.Fatal("the message was not delivered once the gate opened")
	}
}
