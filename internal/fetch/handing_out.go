package fetch

import "github.com/IBM/sarama"

// HandingOut runs the consumer's interceptors (Consumer.Interceptors) on
// m as it is handed to the application: the worker calls it once for each
// message it hands out, whichever path read it, and never for one a seek,
// a pause or a stop dropped before it went out. Interceptors therefore
// never run when a batch is fetched, and sarama's partition consumer must
// not run them either (the group opens it without them). A panicking
// interceptor is skipped for that message, as sarama does.
func (e *Engine) HandingOut(m *sarama.ConsumerMessage) {
	if ics := e.env.config.Consumer.Interceptors; len(ics) > 0 {
		applyInterceptors(ics, []*sarama.ConsumerMessage{m})
	}
}
