package consumergroup

import "github.com/IBM/sarama"

// pendingConsumer is a sarama partition consumer that may still be
// opening: ready is closed once spc or err is set.
type pendingConsumer struct {
	ready chan struct{}
	spc   sarama.PartitionConsumer
	err   error
	feed  *batchFeed // instead of spc: ready is never closed
}

// fedConsumer is a pendingConsumer whose messages come from feed.
func fedConsumer(feed *batchFeed) *pendingConsumer {
	return &pendingConsumer{feed: feed}
}

// openedConsumer is a pendingConsumer for spc, open already.
func openedConsumer(spc sarama.PartitionConsumer) *pendingConsumer {
	p := &pendingConsumer{ready: make(chan struct{}), spc: spc}
	close(p.ready)
	return p
}

// openAsync opens the partition consumer at from in the background. Unlike
// open, it does not handle an offset out of range: the caller opens again
// with open when it fails.
func (w *partitionWorker) openAsync(from int64) *pendingConsumer {
	p := &pendingConsumer{ready: make(chan struct{})}
	go func() {
		defer close(p.ready)
		p.spc, p.err = w.openPartitionConsumer(from)
	}()
	return p
}

// close waits until the consumer is open and closes it (see
// closePartitionConsumer). It returns the error of a failed open.
func (p *pendingConsumer) close() error {
	if p.feed != nil {
		return p.feed.stop()
	}
	<-p.ready
	if p.err != nil {
		return p.err
	}
	closePartitionConsumer(p.spc)
	return nil
}
