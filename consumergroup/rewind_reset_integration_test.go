package consumergroup

import (
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/internal/testenv"
)

// A stored offset past the log's end (a truncated or re-created topic) is
// taken back to Offsets.Initial, a lower offset. Offsets never go backwards
// but by a reset, so that write is one: fenced by the owner's claim, with a
// bump of the epoch that ends the claim (and fences anything else still
// committing under it); the owner then claims again and reads the offset.
// Before, the lower offset was committed under the same epoch, as any
// commit: the epoch moved once (the claim), not three times (claim, reset,
// claim again).
func TestIntegrationOutOfRangeRewindIsAReset(t *testing.T) {
	f := newOrphanFixture(t, 1)
	if err := f.kg.ResetOffset(f.topic, 0, 1000); err != nil { // past the 3 messages
		t.Fatal(err)
	}
	conn, _, err := zk.Connect([]string{testenv.ZKAddr()}, 6*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	epochNode := path.Join("/consumers", f.group, "epochs", f.topic, "0")
	_, st, err := conn.Get(epochNode)
	if err != nil {
		t.Fatal(err)
	}
	before := st.Version

	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{testenv.ZKAddr()}, fenceTestConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	go func() {
		for e := range cg.Errors() {
			t.Logf("error: %v", e)
		}
	}()
	select {
	case m := <-cg.Messages():
		if m.Offset != 0 {
			t.Errorf("first delivery at %d, want 0 (Offsets.Initial: oldest)", m.Offset)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("nothing delivered after the out-of-range offset")
	}
	_, st, err = conn.Get(epochNode)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Version - before; got < 3 {
		t.Errorf("the epoch moved %d times, want 3 (claim, the rewind as a reset, claim again): the lower offset was committed under the claim's epoch", got)
	}
	if stored, err := f.kg.FetchOffset(f.topic, 0); err != nil || stored != 0 {
		t.Errorf("stored offset %d (%v), want 0", stored, err)
	}
}
