package consumergroup

import (
	"errors"
	"testing"
)

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
