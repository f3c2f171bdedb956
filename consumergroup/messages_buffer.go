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
// back: each partition's drain then waits only for the marks of what the
// application got, and its final commit stays below what was taken. stop
// ends the watch and waits for it. See docs/recall.md, "A shared buffer".
func (cg *ConsumerGroup) takeBackUnreadWhileClosing() (stop func()) {
	if cg.outbox == nil {
		return func() {}
	}
	return cg.outbox.TakeBackWhileUnread(unreadPatience, func(n int) {
		cg.log.Info("closing with messages unread in the Messages() buffer: taken back", "messages", n)
	})
}
