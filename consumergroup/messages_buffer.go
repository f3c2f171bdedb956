package consumergroup

import "time"

// unreadPatience is how long Close lets a buffered Messages() sit unread
// before it takes back what the buffer holds.
const unreadPatience = 200 * time.Millisecond

// takeBackUnreadWhileClosing watches a buffered Messages() (Messages.Buffer)
// while Close waits for the partitions to stop. While the application
// reads, each partition's drain waits for the marks of what it got, as on
// any stop. Once nothing has been read for unreadPatience (the application
// stopped reading, maybe to call Close), what the buffer holds is taken
// back: every partition it held messages of restarts below them, so its
// drain waits for nothing the application will not get, and its final
// commit stores the marks. stop ends the watch and waits for it. See
// docs/recall.md, "A shared buffer".
func (cg *ConsumerGroup) takeBackUnreadWhileClosing() (stop func()) {
	if cg.outbox == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(unreadPatience / 8)
		defer tick.Stop()
		ch := cg.outbox.C()
		last, since := -1, time.Now()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			n := len(ch)
			if n != last || n == 0 {
				last, since = n, time.Now()
				continue
			}
			if time.Since(since) >= unreadPatience {
				taken := cg.outbox.TakeBackAll()
				cg.log.Info("closing with messages unread in the Messages() buffer: taken back", "messages", taken)
				last, since = -1, time.Now()
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
