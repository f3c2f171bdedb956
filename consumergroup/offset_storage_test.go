package consumergroup

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zkgroup/kafka/internal/offsets"
)

func TestOffsetStorageDefault(t *testing.T) {
	if got := NewConfig().Offsets.Storage; got != OffsetStorageZookeeper {
		t.Fatalf("Offsets.Storage defaults to %q, want %q", got, OffsetStorageZookeeper)
	}
}

func TestOffsetStorageValidate(t *testing.T) {
	for _, s := range []OffsetStorage{OffsetStorageZookeeper, OffsetStorageKafka, OffsetStorageDual} {
		c := NewConfig()
		c.Offsets.Storage = s
		if err := c.Validate(); err != nil {
			t.Errorf("Offsets.Storage %q refused: %v", s, err)
		}
	}
	for _, s := range []OffsetStorage{"", "Kafka", "zk", "both", " kafka"} {
		c := NewConfig()
		c.Offsets.Storage = s
		err := c.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "Offsets.Storage" || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Offsets.Storage %q: got %v, want a *ConfigError naming Offsets.Storage", s, err)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", string(s))) {
			t.Errorf("Offsets.Storage %q: the error does not quote the value: %v", s, err)
		}
	}
}

func TestOffsetStorageStores(t *testing.T) {
	for _, c := range []struct {
		s     OffsetStorage
		kind  offsets.Kind
		kafka bool
	}{
		{OffsetStorageZookeeper, offsets.KindZookeeper, false},
		{OffsetStorageKafka, offsets.KindKafka, true},
		{OffsetStorageDual, offsets.KindDual, true},
	} {
		if c.s.kind() != c.kind || c.s.usesKafka() != c.kafka {
			t.Errorf("%q: store %v, Kafka opened %v; want %v %v", c.s, c.s.kind(), c.s.usesKafka(), c.kind, c.kafka)
		}
		if c.s.kind().String() != string(c.s) {
			t.Errorf("%q: the store calls itself %q", c.s, c.s.kind())
		}
	}
}
