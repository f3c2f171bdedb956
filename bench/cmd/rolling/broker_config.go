package main

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// groupRebalanceDelay returns the broker's group.initial.rebalance.delay.ms,
// which holds back the first rebalance of an empty Kafka-coordinated group.
func groupRebalanceDelay(brokers []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err.Error()
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	bs, err := adm.ListBrokers(ctx)
	if err != nil {
		return err.Error()
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx, bs.NodeIDs()...)
	if err != nil {
		return err.Error()
	}
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key == "group.initial.rebalance.delay.ms" {
				return c.MaybeValue() + " ms (" + c.Source.String() + ")"
			}
		}
	}
	return "unknown"
}
