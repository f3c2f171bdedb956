package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// produce writes rate messages a second, round-robin over the topic's
// partitions, until stop is closed, and records where each one landed.
// Messages go out in small batches every 10 ms; a batch that fails is
// reported and not recorded (it was not written, so it cannot be lost).
func produce(brokers []string, topic string, rate int, l *ledger, tl *timeline, stop <-chan struct{}) error {
	config := sarama.NewConfig()
	config.ClientID = "zkgroup-demo-producer"
	config.Producer.Return.Successes = true
	config.Producer.RequiredAcks = sarama.WaitForAll
	config.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	producer, err := sarama.NewSyncProducer(brokers, config)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer producer.Close()

	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var sent int64
	for {
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
		due := int64(time.Since(start).Seconds()*float64(rate)) - sent
		if due <= 0 {
			continue
		}
		batch := make([]*sarama.ProducerMessage, due)
		for i := range batch {
			batch[i] = &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprintf("demo message %d", sent+int64(i)))}
		}
		sent += due
		failed := map[*sarama.ProducerMessage]bool{}
		if err := producer.SendMessages(batch); err != nil {
			var perrs sarama.ProducerErrors
			if errors.As(err, &perrs) {
				for _, pe := range perrs {
					failed[pe.Msg] = true
				}
				tl.add("producer: %d of %d messages not written: %v", len(perrs), len(batch), perrs[0].Err)
			} else {
				tl.add("producer: batch not written: %v", err)
				continue
			}
		}
		for _, m := range batch {
			if !failed[m] {
				l.wrote(m.Partition, m.Offset)
			}
		}
	}
}
