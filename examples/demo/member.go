package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/tcpproxy"
)

// member is one instance of the demo's consumer group. It reaches
// ZooKeeper through proxies of its own, so the demo can cut it off from
// ZooKeeper alone, as a network partition or a hung host would; its Kafka
// connections are left alone.
type member struct {
	id      int
	proxies []*tcpproxy.Proxy
	group   *consumergroup.ConsumerGroup
	state   *memberState
	done    chan struct{} // closed when Messages() and Errors() are drained
}

// memberSettings are what every member of the demo shares.
type memberSettings struct {
	servers   []string // ZooKeeper servers
	chroot    string
	group     string
	topic     string
	session   time.Duration
	ledger    *ledger
	timeline  *timeline
	verbose   slog.Handler // nil unless -verbose
	zkLogging bool
}

// joinMember starts member id: a proxy per ZooKeeper server, then
// JoinConsumerGroup through them, then a loop that records and marks every
// message it is given.
func joinMember(id int, s memberSettings) (*member, error) {
	m := &member{id: id, state: &memberState{id: id, timeline: s.timeline}, done: make(chan struct{})}
	addrs := make([]string, 0, len(s.servers))
	for _, server := range s.servers {
		p, err := tcpproxy.New(server)
		if err != nil {
			m.closeProxies()
			return nil, err
		}
		m.proxies = append(m.proxies, p)
		addrs = append(addrs, p.Addr())
	}

	config := consumergroup.NewConfig()
	config.ClientID = fmt.Sprintf("zkgroup-demo-member-%d", id)
	config.Offsets.Initial = sarama.OffsetOldest
	config.Offsets.CommitInterval = time.Second
	config.Offsets.ProcessingTimeout = 5 * time.Second
	config.Zookeeper.Timeout = s.session
	config.Zookeeper.Chroot = s.chroot
	config.Logger = slog.New(&memberLog{state: m.state, next: s.verbose})
	if s.zkLogging {
		config.Zookeeper.Logger = slog.NewLogLogger(s.verbose.WithAttrs([]slog.Attr{slog.Int("member", id), slog.String("component", "zookeeper")}), slog.LevelInfo)
	}

	group, err := consumergroup.JoinConsumerGroup(s.group, []string{s.topic}, addrs, config)
	if err != nil {
		m.closeProxies()
		return nil, fmt.Errorf("member %d: %w", id, err)
	}
	m.group = group

	errsDone := make(chan struct{})
	go func() {
		defer close(errsDone)
		for err := range group.Errors() {
			what, partition := describe(err)
			s.timeline.note(fmt.Sprintf("member %d Errors(): %s", id, what), partition)
		}
	}()
	go func() {
		defer close(m.done)
		for msg := range group.Messages() {
			s.ledger.delivered(id, msg.Partition, msg.Offset)
			group.CommitUpto(msg) // processed at once: the demo's work is recording it
		}
		<-errsDone
	}()
	return m, nil
}

// cut drops the member's ZooKeeper connections and refuses new ones.
func (m *member) cut() {
	for _, p := range m.proxies {
		p.Cut()
	}
}

// restore lets the member reach ZooKeeper again.
func (m *member) restore() {
	for _, p := range m.proxies {
		p.Restore()
	}
}

// close leaves the group (committing what was marked) within ctx, and
// stops the proxies.
func (m *member) close(ctx context.Context) error {
	err := m.group.CloseContext(ctx)
	<-m.done
	m.closeProxies()
	return err
}

func (m *member) closeProxies() {
	for _, p := range m.proxies {
		_ = p.Close()
	}
}
