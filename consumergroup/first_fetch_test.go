package consumergroup

import (
	"testing"

	"github.com/IBM/sarama"
)

type recordingInterceptor struct{ seen []int64 }

func (r *recordingInterceptor) OnConsume(m *sarama.ConsumerMessage) {
	r.seen = append(r.seen, m.Offset)
	m.Value = append([]byte("seen:"), m.Value...)
}

type panickingInterceptor struct{}

func (panickingInterceptor) OnConsume(*sarama.ConsumerMessage) { panic("interceptor bug") }

// The direct first fetch applies the configured interceptors, in order, to
// every message; a panicking one does not stop the others.
func TestApplyInterceptors(t *testing.T) {
	rec := &recordingInterceptor{}
	msgs := []*sarama.ConsumerMessage{{Offset: 5, Value: []byte("a")}, {Offset: 6, Value: []byte("b")}}
	applyInterceptors([]sarama.ConsumerInterceptor{panickingInterceptor{}, rec}, msgs)
	if len(rec.seen) != 2 || rec.seen[0] != 5 || rec.seen[1] != 6 {
		t.Fatalf("interceptor saw %v, want [5 6]", rec.seen)
	}
	if string(msgs[0].Value) != "seen:a" || string(msgs[1].Value) != "seen:b" {
		t.Fatalf("values after interceptors: %q %q", msgs[0].Value, msgs[1].Value)
	}
}
