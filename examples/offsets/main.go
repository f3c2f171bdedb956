// Command offsets shows where consumer groups stand: for every topic and
// partition a group consumes, the offset it committed in ZooKeeper, the
// instance that owns the partition now, the partition's newest offset in
// Kafka, and the lag between the two.
//
//	go run ./examples/offsets -group my-group
//	go run ./examples/offsets -all -json
//
// Committed offsets and owners come from ZooKeeper (/consumers/<group>/offsets
// and /owners, through package kazoo); the brokers are found in ZooKeeper too,
// and the newest offsets are asked of them through sarama. The committed
// offset is the next offset the group will consume, so the lag is
// newest - committed: the number of messages not yet committed. A partition
// without a committed offset shows "-" for both. A group's topics are those
// it has committed offsets for, has claimed partitions of, or whose
// registered instances subscribe to.
//
// It only reads, unless given -apply-acl; -verbose logs sarama's activity
// to standard error. The exit status is 1 if ZooKeeper
// or Kafka could not be reached or a named group does not exist. To change
// offsets (reset, import, transfer to or from Kafka), use the operator
// command cmd/zkgroup-offsets.
//
// Security: -zk-tls-ca/-zk-tls-cert/-zk-tls-key connect to ZooKeeper's TLS
// port, -zk-user/-zk-password-file add digest credentials, -listener picks
// the brokers' listener (SASL_SSL, say), -kafka-tls-ca and
// -sasl-user/-sasl-password-file/-sasl-mechanism set sarama's TLS and SCRAM.
//
// -apply-acl SPEC -group NAME sets the access list of every node of the
// group (see kazoo.Consumergroup.ApplyACL); it is a dry run, listing what
// would change, unless -dry-run=false:
//
//	go run ./examples/offsets -group my-group -zk-user my-group -zk-password-file pw \
//	    -apply-acl recommended -dry-run=false
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/secflags"
	"github.com/zkgroup/kafka/kazoo"
)

// GroupReport is what the program knows about one consumer group. It is
// also the element of the -json output.
type GroupReport struct {
	Group      string            `json:"group"`
	Instances  []string          `json:"instances"`
	Partitions []PartitionReport `json:"partitions"`
	Error      string            `json:"error,omitempty"` // the group could not be read
}

// PartitionReport is one row of the output.
type PartitionReport struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed *int64 `json:"committed"` // next offset to consume; null if none is committed
	Newest    *int64 `json:"newest"`    // offset of the next message produced; null if unknown
	Lag       *int64 `json:"lag"`       // Newest - Committed; null if either is unknown
	Owner     string `json:"owner,omitempty"`
	Error     string `json:"error,omitempty"` // why Newest is unknown
}

func main() {
	zookeeper := flag.String("zookeeper", "127.0.0.1:2181", "ZooKeeper connection string (`host:port,...[/chroot]`)")
	group := flag.String("group", "", "consumer group to inspect")
	all := flag.Bool("all", false, "inspect every consumer group under /consumers")
	asJSON := flag.Bool("json", false, "print a JSON array of groups instead of a table")
	aclSpec := flag.String("apply-acl", "", "set this ACL on every node of -group: recommended, open, or `scheme:id:perms,...`")
	dryRun := flag.Bool("dry-run", true, "with -apply-acl: only list the nodes that would change")
	sec := secflags.Register(flag.CommandLine)
	verbose := flag.Bool("verbose", false, "log sarama's activity to standard error")
	flag.Parse()
	if *verbose {
		sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags)
	}
	if (*group == "") == !*all || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "offsets: give exactly one of -group NAME and -all")
		flag.Usage()
		os.Exit(2)
	}
	zkConf, err := sec.ZK()
	if err == nil && *aclSpec != "" {
		err = runApplyACL(*zookeeper, zkConf, *group, *aclSpec, sec, *dryRun, os.Stdout)
	} else if err == nil {
		kafkaConf := sarama.NewConfig()
		if err = sec.Kafka(kafkaConf); err == nil {
			err = run(*zookeeper, zkConf, kafkaConf, *group, *asJSON, os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "offsets:", err)
		os.Exit(1)
	}
}

// runApplyACL is the -apply-acl mode.
func runApplyACL(zookeeper string, zkConf *kazoo.Config, group, spec string, sec *secflags.Flags, dryRun bool, out io.Writer) error {
	if group == "" {
		return errors.New("-apply-acl needs -group")
	}
	acl, err := parseACL(spec, sec.ZKUser, sec.ZKPassword)
	if err != nil {
		return err
	}
	kz, err := kazoo.NewKazooFromConnectionString(zookeeper, zkConf)
	if err != nil {
		return err
	}
	defer kz.Close()
	return applyACL(kz, group, acl, dryRun, out)
}

// run inspects group, or every group when group is "".
func run(zookeeper string, zkConf *kazoo.Config, kafkaConf *sarama.Config, group string, asJSON bool, out io.Writer) error {
	kz, err := kazoo.NewKazooFromConnectionString(zookeeper, zkConf)
	if err != nil {
		return err
	}
	defer kz.Close()

	var groups kazoo.ConsumergroupList
	if group == "" {
		if groups, err = kz.Consumergroups(); err != nil {
			return fmt.Errorf("list consumer groups: %w", err)
		}
	} else {
		cg := kz.Consumergroup(group)
		exists, err := cg.Exists()
		if err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("consumer group %q does not exist in ZooKeeper", group)
		}
		groups = kazoo.ConsumergroupList{cg}
	}

	brokers, err := kz.BrokerList()
	if err != nil {
		return fmt.Errorf("list brokers: %w", err)
	}
	if len(brokers) == 0 {
		return errors.New("no Kafka broker is registered in ZooKeeper")
	}
	client, err := sarama.NewClient(brokers, kafkaConf)
	if err != nil {
		return fmt.Errorf("connect to Kafka at %v: %w", brokers, err)
	}
	defer client.Close()

	reports := make([]GroupReport, 0, len(groups))
	for _, cg := range groups {
		r, err := inspect(kz, client, cg)
		if err != nil {
			if group != "" {
				return err
			}
			r = GroupReport{Group: cg.Name, Error: err.Error()} // one odd group must not hide the others
		}
		reports = append(reports, r)
	}

	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}
	return writeTable(out, reports)
}

// inspect reads one group's instances, committed offsets and owners from
// ZooKeeper and the newest offsets of its partitions from Kafka.
func inspect(kz *kazoo.Kazoo, client sarama.Client, cg *kazoo.Consumergroup) (GroupReport, error) {
	r := GroupReport{Group: cg.Name, Instances: []string{}, Partitions: []PartitionReport{}}

	instances, err := cg.Instances()
	if err != nil {
		return r, fmt.Errorf("group %s: instances: %w", cg.Name, err)
	}
	for _, i := range instances {
		r.Instances = append(r.Instances, i.ID)
	}

	committed, err := cg.FetchAllOffsets()
	if err != nil {
		return r, fmt.Errorf("group %s: offsets: %w", cg.Name, err)
	}

	// The group's topics: committed offsets, claimed partitions, subscriptions.
	topics := make(map[string]bool)
	for t := range committed {
		topics[t] = true
	}
	owned, err := cg.Topics()
	if err != nil {
		return r, fmt.Errorf("group %s: owners: %w", cg.Name, err)
	}
	for _, t := range owned {
		topics[t.Name] = true
	}
	subscribed, err := cg.OnlineTopics()
	if err != nil {
		return r, fmt.Errorf("group %s: subscriptions: %w", cg.Name, err)
	}
	for t := range subscribed {
		topics[t] = true
	}

	for _, topic := range sortedKeys(topics) {
		ids, missing, err := partitionIDs(kz, topic, committed[topic])
		if err != nil {
			return r, fmt.Errorf("group %s: %w", cg.Name, err)
		}
		for _, p := range ids {
			row := PartitionReport{Topic: topic, Partition: p}
			if off, ok := committed[topic][p]; ok {
				row.Committed = &off
			}
			owner, err := cg.PartitionOwner(topic, p)
			if err != nil {
				return r, fmt.Errorf("group %s: owner of %s/%d: %w", cg.Name, topic, p, err)
			}
			if owner != nil {
				row.Owner = owner.ID
			}
			if missing {
				row.Error = "topic does not exist in the cluster"
			} else if newest, err := client.GetOffset(topic, p, sarama.OffsetNewest); err != nil {
				row.Error = err.Error()
			} else {
				row.Newest = &newest
				if row.Committed != nil {
					lag := newest - *row.Committed
					row.Lag = &lag
				}
			}
			r.Partitions = append(r.Partitions, row)
		}
	}
	return r, nil
}

// partitionIDs returns the topic's partitions as ZooKeeper lists them, plus
// any partition the group committed an offset for that no longer exists.
// missing reports a topic that is not registered in the cluster at all.
func partitionIDs(kz *kazoo.Kazoo, topic string, committed map[int32]int64) (ids []int32, missing bool, err error) {
	seen := make(map[int32]bool)
	partitions, err := kz.Topic(topic).Partitions()
	switch {
	case errors.Is(err, kazoo.ErrNoNode):
		missing = true
	case err != nil:
		return nil, false, fmt.Errorf("partitions of %s: %w", topic, err)
	}
	for _, p := range partitions {
		seen[p.ID] = true
	}
	for p := range committed {
		seen[p] = true
	}
	for p := range seen {
		ids = append(ids, p)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, missing, nil
}

// writeTable prints one tab-aligned row per partition; a group without
// partitions gets a row of its own so that it is not silently left out.
func writeTable(out io.Writer, reports []GroupReport) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tTOPIC\tPARTITION\tCOMMITTED\tNEWEST\tLAG\tOWNER\tNOTE")
	for _, r := range reports {
		if r.Error != "" || len(r.Partitions) == 0 {
			note := r.Error
			if note == "" {
				note = fmt.Sprintf("no topics (%d instances)", len(r.Instances))
			}
			fmt.Fprintf(w, "%s\t-\t-\t-\t-\t-\t-\t%s\n", r.Group, note)
			continue
		}
		for _, p := range r.Partitions {
			owner := p.Owner
			if owner == "" {
				owner = "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n",
				r.Group, p.Topic, p.Partition, orDash(p.Committed), orDash(p.Newest), orDash(p.Lag), owner, p.Error)
		}
	}
	return w.Flush()
}

func orDash(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
