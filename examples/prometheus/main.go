package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/kazoo"
)

func main() {
	var (
		zookeeper = flag.String("zookeeper", "127.0.0.1:2181", "ZooKeeper connection string")
		group     = flag.String("group", "zkgroup.example.prometheus", "consumer group")
		topics    = flag.String("topics", "zkgroup.test.four", "comma-separated topics")
		listen    = flag.String("listen", "127.0.0.1:9464", "address to serve /metrics and /healthz on")
		verbose   = flag.Bool("verbose", false, "log sarama's and the group's messages")
	)
	flag.Parse()
	if *verbose {
		sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg := consumergroup.NewConfig()
	cfg.Offsets.Initial = sarama.OffsetOldest
	reg := metrics.NewRegistry()
	cfg.MetricRegistry = reg
	nodes, chroot := kazoo.ParseConnectionString(*zookeeper)
	cfg.Zookeeper.Chroot = chroot
	cg, err := consumergroup.JoinConsumerGroup(*group, strings.Split(*topics, ","), nodes, cfg)
	if err != nil {
		log.Fatal(err)
	}

	promReg := prometheus.NewRegistry()
	promReg.MustRegister(NewCollector("kafka", reg))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(promReg, promhttp.HandlerOpts{}))
	mux.Handle("/healthz", Healthz(cg))
	srv := &http.Server{Addr: *listen, Handler: mux}
	go func() {
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	fmt.Printf("serving metrics at http://%s/metrics, health at http://%s/healthz\n", *listen, *listen)

	for {
		select {
		case m := <-cg.Messages():
			_ = cg.CommitUpto(m)
		case err := <-cg.Errors():
			log.Printf("error: %v", err)
		case <-ctx.Done():
			_ = srv.Close()
			// Leave the group within a pod's grace period (30 s) less a
			// margin: see docs/shutdown.md.
			closeCtx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
			defer cancel()
			if err := cg.CloseContext(closeCtx); err != nil {
				log.Printf("close: %v", err)
			}
			return
		}
	}
}
