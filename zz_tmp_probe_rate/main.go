package main

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/zkgroup/kafka/consumergroup"
)

func received() int64 {
	c, err := net.Dial("tcp", "127.0.0.1:2181")
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Fprint(c, "srvr")
	s := bufio.NewScanner(c)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "Received:") {
			var n int64
			fmt.Sscanf(strings.TrimPrefix(s.Text(), "Received: "), "%d", &n)
			return n
		}
	}
	return -1
}

func main() {
	r0 := received()
	time.Sleep(3 * time.Second)
	r1 := received()
	fmt.Printf("baseline: %d packets/s\n", (r1-r0)/3)
	cfg := consumergroup.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Zookeeper.Timeout = 3 * time.Second
	cg, err := consumergroup.JoinConsumerGroup(fmt.Sprintf("probe-rate-%d", time.Now().UnixNano()), []string{"__no_such_topic_probe"}, []string{"127.0.0.1:2181"}, cfg)
	if err != nil {
		panic(err)
	}
	go func() {
		for range cg.Errors() {
		}
	}()
	time.Sleep(time.Second)
	r2 := received()
	time.Sleep(3 * time.Second)
	r3 := received()
	fmt.Printf("with one idle consumer (timeout 3s): %d packets/s\n", (r3-r2)/3)
	cg.Close()
}
