package consumergroup

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

func TestUpstreamErrorNames(t *testing.T) {
	// Upstream's exported sentinels keep their names; the Err-prefixed
	// aliases are the same values.
	if !errors.Is(ErrAlreadyClosing, AlreadyClosing) || !errors.Is(ErrUncleanClose, UncleanClose) {
		t.Fatal("aliases must be the same values as the upstream names")
	}
	if errors.Is(AlreadyClosing, UncleanClose) {
		t.Fatal("distinct sentinels must not match each other")
	}
	wrapped := fmt.Errorf("close: %w", UncleanClose)
	if !errors.Is(wrapped, ErrUncleanClose) {
		t.Fatal("wrapped UncleanClose must match ErrUncleanClose")
	}
}

func TestPartitionErrorIsSaramaConsumerError(t *testing.T) {
	cause := errors.New("boom")
	err := newPartitionError("events", 3, cause)

	// Upstream sent *sarama.ConsumerError on Errors(); code asserting that
	// type must keep working.
	ce, ok := err.(*sarama.ConsumerError)
	if !ok {
		t.Fatalf("newPartitionError returned %T, want *sarama.ConsumerError", err)
	}
	if ce.Topic != "events" || ce.Partition != 3 || ce.Err != cause {
		t.Fatalf("got %+v", ce)
	}
	var pe *PartitionError
	if !errors.As(fmt.Errorf("ctx: %w", err), &pe) || pe.Partition != 3 {
		t.Fatal("errors.As to *PartitionError failed")
	}
	if !errors.Is(err, cause) {
		t.Fatal("PartitionError must unwrap to its cause")
	}
	if !strings.Contains(err.Error(), "events/3") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("message %q must name topic/partition and cause", err)
	}
}

func TestNewPartitionError(t *testing.T) {
	if newPartitionError("t", 0, nil) != nil {
		t.Fatal("nil cause must give nil")
	}
	inner := newPartitionError("t", 1, errors.New("x"))
	if got := newPartitionError("t", 1, fmt.Errorf("again: %w", inner)); got == inner {
		t.Fatal("a wrapped error is not returned as is")
	} else if got2 := newPartitionError("t", 1, inner); got2 != inner {
		t.Fatal("an error already for the same partition must be returned as is")
	}
	if got := newPartitionError("t", 2, inner); got.(*PartitionError).Partition != 2 {
		t.Fatal("an error for another partition must be wrapped")
	} else if !errors.Is(got, inner) {
		t.Fatal("the inner error must stay reachable")
	}
}

func TestOffsetConflictError(t *testing.T) {
	kerr := &kazoo.OffsetConflictError{Topic: "t", Partition: 2, Stored: 10, Version: 4}
	err := error(&OffsetConflictError{Topic: "t", Partition: 2, Pending: 57, Stored: 10, Err: kerr})
	if !errors.Is(err, kazoo.ErrOffsetConflict) {
		t.Fatal("must match kazoo.ErrOffsetConflict")
	}
	var oce *OffsetConflictError
	if !errors.As(fmt.Errorf("wrap: %w", err), &oce) || oce.Stored != 10 || oce.Pending != 57 {
		t.Fatal("errors.As failed")
	}
	for _, want := range []string{"t/2", "stored 10", "pending 57"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

func TestConfigErrorUnwrap(t *testing.T) {
	nested := sarama.ConfigurationError("Net.MaxOpenRequests must be > 0")
	err := error(&ConfigError{Field: "Config", Reason: "is invalid", Err: nested})
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatal("must match ErrInvalidConfig")
	}
	var ce sarama.ConfigurationError
	if !errors.As(err, &ce) || ce != nested {
		t.Fatal("must unwrap to the nested sarama error")
	}
	if got, want := err.Error(), "consumergroup: Config is invalid: kafka: invalid configuration (Net.MaxOpenRequests must be > 0)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	plain := &ConfigError{Field: "Offsets.ProcessingTimeout", Reason: "must be > 0, got 0s"}
	if got, want := plain.Error(), "consumergroup: Offsets.ProcessingTimeout must be > 0, got 0s"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestValidateJoinArgs(t *testing.T) {
	zk := []string{"localhost:2181"}
	long := strings.Repeat("a", 249)
	tests := []struct {
		name   string
		group  string
		topics []string
		zk     []string
		want   []error // every sentinel the result must match; nil: valid
		substr string  // the message must contain this
	}{
		{name: "valid", group: "my-group", topics: []string{"a", "b.c_d-E9"}, zk: zk},
		{name: "valid group with spaces and unicode", group: "team ünïcode:1", topics: []string{"a"}, zk: zk},
		{name: "valid longest topic", group: "g", topics: []string{long}, zk: zk},
		{name: "valid several zk", group: "g", topics: []string{"a"}, zk: []string{"zk1:2181", "zk2:2181"}},
		{name: "empty group", group: "", topics: []string{"a"}, zk: zk, want: []error{ErrInvalidGroupName}, substr: "empty"},
		{name: "group with slash", group: "a/b", topics: []string{"a"}, zk: zk, want: []error{ErrInvalidGroupName}, substr: `"/"`},
		{name: "group dot", group: ".", topics: []string{"a"}, zk: zk, want: []error{ErrInvalidGroupName}},
		{name: "group dotdot", group: "..", topics: []string{"a"}, zk: zk, want: []error{ErrInvalidGroupName}},
		{name: "group control char", group: "a\x00b", topics: []string{"a"}, zk: zk, want: []error{ErrInvalidGroupName}, substr: "U+0000"},
		{name: "group DEL", group: "a\x7f", topics: []string{"a"}, zk: zk, want: []error{ErrInvalidGroupName}},
		{name: "group private use", group: "a\ue000", topics: []string{"a"}, zk: zk, want: []error{ErrInvalidGroupName}},
		{name: "group bad utf8", group: "a\xff", topics: []string{"a"}, zk: zk, want: []error{ErrInvalidGroupName}, substr: "UTF-8"},
		{name: "nil topics", group: "g", topics: nil, zk: zk, want: []error{ErrNoTopics}},
		{name: "empty topic", group: "g", topics: []string{""}, zk: zk, want: []error{ErrInvalidTopic}, substr: "topics[0]"},
		{name: "topic with space", group: "g", topics: []string{"a", "b c"}, zk: zk, want: []error{ErrInvalidTopic}, substr: "topics[1]"},
		{name: "topic with slash", group: "g", topics: []string{"a/b"}, zk: zk, want: []error{ErrInvalidTopic}},
		{name: "topic non-ascii", group: "g", topics: []string{"ä"}, zk: zk, want: []error{ErrInvalidTopic}, substr: `'ä'`},
		{name: "topic dot", group: "g", topics: []string{"."}, zk: zk, want: []error{ErrInvalidTopic}},
		{name: "topic too long", group: "g", topics: []string{long + "a"}, zk: zk, want: []error{ErrInvalidTopic}, substr: "249"},
		{name: "duplicate topic", group: "g", topics: []string{"a", "b", "a"}, zk: zk, want: []error{ErrInvalidTopic}, substr: "more than once"},
		{name: "no zookeeper", group: "g", topics: []string{"a"}, zk: nil, want: []error{ErrNoZookeeper}},
		{name: "blank zookeeper", group: "g", topics: []string{"a"}, zk: []string{"zk:2181", " "}, want: []error{ErrNoZookeeper}, substr: "zookeeper[1]"},
		{name: "everything wrong", group: "", topics: nil, zk: nil, want: []error{ErrInvalidGroupName, ErrNoTopics, ErrNoZookeeper}},
	}
	all := []error{ErrInvalidGroupName, ErrNoTopics, ErrInvalidTopic, ErrNoZookeeper}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := validateJoinArgs(tc.group, tc.topics, tc.zk)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, s := range all {
				wanted := false
				for _, w := range tc.want {
					wanted = wanted || w == s
				}
				if errors.Is(err, s) != wanted {
					t.Errorf("errors.Is(err, %v) = %v, want %v (err: %v)", s, !wanted, wanted, err)
				}
			}
			if !strings.Contains(err.Error(), tc.substr) {
				t.Errorf("message %q lacks %q", err, tc.substr)
			}
		})
	}
}

// A registration named in an error carries the chroot in use, also one
// given in the connection string ("host:2181/kafka") rather than in
// Zookeeper.Chroot.
func TestRegistrationPathNamesTheChroot(t *testing.T) {
	cg := &ConsumerGroup{config: NewConfig(), name: "g", chroot: "/kafka"}
	if got, want := cg.registrationPath("i"), "/kafka/consumers/g/ids/i"; got != want {
		t.Errorf("registrationPath = %q, want %q", got, want)
	}
}
