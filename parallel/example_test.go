package parallel_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/parallel"
)

// Process a topic's messages concurrently across keys, in order within a
// key, through consumergroup's HandlerGroup (sarama.NewConsumerGroup works
// the same). Each partition runs up to 64 messages at once; a message
// failing 5 times is skipped and logged. Marks only ever cover messages
// whose predecessors all finished, so a crash or a rebalance never skips
// one.
func ExampleNewHandler() {
	config := consumergroup.NewConfig()
	config.Offsets.Initial = sarama.OffsetOldest
	config.Consumer.Offsets.Initial = sarama.OffsetOldest
	group, err := consumergroup.NewConsumerGroup("my-group", []string{"127.0.0.1:2181"}, config)
	if err != nil {
		log.Fatalln(err)
	}
	go func() {
		for err := range group.Errors() {
			log.Println("group:", err)
		}
	}()

	store := func(ctx context.Context, msg *sarama.ConsumerMessage) error {
		return nil // your I/O: a call to a database, an HTTP request...
	}
	handler := parallel.NewHandler(store, parallel.Config{
		MaxInFlight:  64,
		DrainTimeout: 20 * time.Second, // below Offsets.ProcessingTimeout (60 s)
		Retry:        parallel.Retry{InitialInterval: 100 * time.Millisecond, MaxAttempts: 5},
		OnFailure:    parallel.FailureSkip,
		OnSkip: func(msg *sarama.ConsumerMessage, err error) {
			log.Printf("skipped %s/%d@%d: %v", msg.Topic, msg.Partition, msg.Offset, err)
		},
	})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for ctx.Err() == nil {
		if err := group.Consume(ctx, []string{"my-topic"}, handler); err != nil {
			log.Println("consume:", err)
		}
	}
	if err := group.Close(); err != nil {
		log.Println("close:", err)
	}
}
