package benchstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// CreateTopic creates topic with partitions partitions (one replica) and
// waits until its metadata lists them all. A loaded broker may time the
// request out and create the topic anyway: it asks again until the topic
// exists.
func CreateTopic(ctx context.Context, brokers []string, topic string, partitions int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		_, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, topic)
		if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
			break
		}
		if !errors.Is(err, kerr.RequestTimedOut) || ctx.Err() != nil {
			return fmt.Errorf("create %s: %w", topic, err)
		}
		fmt.Fprintf(os.Stderr, "create %s: %v; asking again\n", topic, err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == partitions {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s: %w", topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DeleteTopic deletes topic, so that runs leave no partitions behind on a
// shared broker; a failure is printed, not returned.
func DeleteTopic(brokers []string, topic string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err == nil {
		defer cl.Close()
		_, err = kadm.NewClient(cl).DeleteTopic(ctx, topic)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "delete %s: %v\n", topic, err)
	}
}
