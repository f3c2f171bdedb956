package consumergroup

import (
	"errors"
	"testing"
)

func TestTopicFilter(t *testing.T) {
	f, err := newTopicFilter(` "orders\..*, audit" `)
	if err != nil {
		t.Fatal(err)
	}
	if f.String() != `orders\..*|audit` {
		t.Fatalf("registered expression %q, want Kafka's normalized form", f.String())
	}
	for topic, want := range map[string]bool{
		"orders.eu": true, "audit": true, "audits": false, "xorders.eu": false,
		"ordersXeu": false, "__consumer_offsets": false,
	} {
		if got := f.sub.includes(topic); got != want {
			t.Errorf("includes(%q) = %v, want %v", topic, got, want)
		}
	}
	internal, err := newTopicFilter(".*")
	if err != nil || internal.sub.includes("__consumer_offsets") || !internal.sub.includes("t") {
		t.Fatalf(".* must match every topic but Kafka's internal ones (%v)", err)
	}
	for _, bad := range []string{"", "  ", `"'`, "(", `a(?=b)`} {
		if _, err := newTopicFilter(bad); !errors.Is(err, ErrInvalidPattern) {
			t.Errorf("newTopicFilter(%q) = %v, want ErrInvalidPattern", bad, err)
		}
	}
}

// Invalid arguments are refused before anything is connected, all at once.
func TestJoinConsumerGroupPatternArgs(t *testing.T) {
	_, err := JoinConsumerGroupPattern("a/b", "(", nil, nil)
	for _, want := range []error{ErrInvalidGroupName, ErrInvalidPattern, ErrNoZookeeper} {
		if !errors.Is(err, want) {
			t.Errorf("error %v does not wrap %v", err, want)
		}
	}
	if _, err := JoinConsumerGroupPattern("g", "t.*", []string{" "}, nil); !errors.Is(err, ErrNoZookeeper) {
		t.Errorf("an empty ZooKeeper address: %v", err)
	}
}
