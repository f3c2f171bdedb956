package consumergroup

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// lockedBuffer is a bytes.Buffer the group's goroutines may log to while
// the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A join works on its own copy of the config (it needs
// Consumer.Return.Errors for its partition consumers), and says once that
// Offsets.Initial wins over a disagreeing Consumer.Offsets.Initial.
func TestIntegrationJoinLeavesCallerConfigAlone(t *testing.T) {
	testenv.Integration(t)
	topic := testenv.UniqueName("cfgcopy")
	testenv.CreateTopic(t, topic, 1)

	var logs lockedBuffer
	c := fenceTestConfig()
	c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	c.Consumer.Offsets.Initial = sarama.OffsetNewest // Offsets.Initial is oldest
	cg, err := JoinConsumerGroup(testenv.UniqueName("cfgcopy-g"), []string{topic}, []string{testenv.ZKAddr()}, c)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range cg.Errors() {
		}
	}()
	if err := cg.Close(); err != nil {
		t.Error(err)
	}
	if c.Consumer.Return.Errors {
		t.Error("joining set the caller's Consumer.Return.Errors")
	}
	if c.ClientID != sarama.NewConfig().ClientID {
		t.Errorf("joining set the caller's ClientID to %q", c.ClientID)
	}
	n := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "Config.Consumer.Offsets.Initial") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d log records mention Config.Consumer.Offsets.Initial, want one:\n%s", n, logs.String())
	}
}
