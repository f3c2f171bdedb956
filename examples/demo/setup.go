package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// members is how many instances the demo's group has; member 2 is the one
// cut off.
const (
	members   = 3
	cutMember = 2
)

// demo holds what the run set up, for the script and for tearDown.
type demo struct {
	kz       *kazoo.Kazoo // the demo's own ZooKeeper connection, never cut
	brokers  []string
	topic    string
	group    string
	ledger   *ledger
	timeline *timeline
	members  []*member
	owners   *owners
	session  time.Duration
	closed   bool
}

// setUp creates a topic and joins the members to a new group.
func setUp(o *options, verbose slog.Handler) (_ *demo, err error) {
	servers, chroot := kazoo.ParseConnectionString(o.zookeeper)
	conf := kazoo.NewConfig()
	conf.Chroot = chroot
	kz, err := kazoo.NewKazoo(servers, conf)
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper at %s: %w (is the stack up? integration/stack.sh up)", o.zookeeper, err)
	}
	d := &demo{kz: kz, session: o.session, ledger: newLedger(time.Now(), o.partitions, members)}
	d.timeline = &timeline{clock: d.ledger.since}
	defer func() {
		if err != nil {
			d.tearDown(io.Discard)
		}
	}()
	if d.brokers, err = kz.BrokerList(); err != nil {
		return nil, fmt.Errorf("list brokers: %w", err)
	} else if len(d.brokers) == 0 {
		return nil, errors.New("no Kafka broker is registered in ZooKeeper (is the stack up? integration/stack.sh up)")
	}
	suffix := randomSuffix()
	d.topic, d.group = "zkgroup.demo-"+suffix, "zkgroup.demo-"+suffix
	if err := createTopic(d.brokers, d.topic, o.partitions); err != nil {
		d.topic = "" // nothing to delete
		return nil, err
	}
	d.timeline.add("created topic %s with %d partitions", d.topic, o.partitions)

	settings := memberSettings{
		servers: servers, chroot: chroot, group: d.group, topic: d.topic, session: o.session,
		ledger: d.ledger, timeline: d.timeline, verbose: verbose, zkLogging: verbose != nil,
	}
	for id := 1; id <= members; id++ {
		m, err := joinMember(id, settings)
		if err != nil {
			return nil, err
		}
		d.members = append(d.members, m)
	}
	return d, nil
}

// closeMembers closes every member at once; it is a no-op the second time.
func (d *demo) closeMembers() error {
	if d.closed {
		return nil
	}
	d.closed = true
	// As a pod would on SIGTERM: leave within the grace period (30 s) less
	// a margin (docs/shutdown.md). With ProcessingTimeout at 5 s a clean
	// close takes far less.
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	errs := make([]error, len(d.members))
	var wg sync.WaitGroup
	for i, m := range d.members {
		wg.Go(func() {
			m.restore() // a member still cut off would wait out its session
			errs[i] = m.close(ctx)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// tearDown closes the members and deletes the group and the topic,
// reporting problems on w.
func (d *demo) tearDown(w io.Writer) {
	if err := d.closeMembers(); err != nil {
		fmt.Fprintln(w, "demo: close:", err)
	}
	if len(d.members) > 0 {
		// A member closed while cut off may leave its registration behind
		// until its session expires; wait that long for it.
		deadline := time.Now().Add(2 * d.session)
		err := d.kz.Consumergroup(d.group).Delete()
		for errors.Is(err, kazoo.ErrRunningInstances) && time.Now().Before(deadline) {
			time.Sleep(250 * time.Millisecond)
			err = d.kz.Consumergroup(d.group).Delete()
		}
		if err != nil {
			fmt.Fprintln(w, "demo: delete group:", err)
		}
	}
	if d.topic != "" {
		if err := deleteTopic(d.brokers, d.topic); err != nil {
			fmt.Fprintln(w, "demo: delete topic:", err)
		}
	}
	d.kz.Close()
}

func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// createTopic creates the topic and waits until each partition has a
// leader.
func createTopic(brokers []string, topic string, partitions int) error {
	admin, err := sarama.NewClusterAdmin(brokers, sarama.NewConfig())
	if err != nil {
		return fmt.Errorf("connect to Kafka at %v: %w", brokers, err)
	}
	defer admin.Close()
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: int32(partitions), ReplicationFactor: 1}, false); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	client, err := sarama.NewClient(brokers, sarama.NewConfig())
	if err != nil {
		return err
	}
	defer client.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if leadersReady(client, topic, partitions) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s: not every partition has a leader after 30s", topic)
		}
	}
}

func leadersReady(client sarama.Client, topic string, partitions int) bool {
	if client.RefreshMetadata(topic) != nil {
		return false
	}
	ps, err := client.Partitions(topic)
	if err != nil || len(ps) != partitions {
		return false
	}
	for _, p := range ps {
		if _, err := client.Leader(topic, p); err != nil {
			return false
		}
	}
	return true
}

func deleteTopic(brokers []string, topic string) error {
	admin, err := sarama.NewClusterAdmin(brokers, sarama.NewConfig())
	if err != nil {
		return err
	}
	defer admin.Close()
	return admin.DeleteTopic(topic)
}
