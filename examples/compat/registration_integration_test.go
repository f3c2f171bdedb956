package compat_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/kazoo"
)

// Registration().Timestamp is an int64 of Unix seconds, whoever wrote the
// registration: this library (as kazoo-go, a JSON number of seconds),
// Kafka's own consumer (a string of milliseconds), or an earlier version of
// this library (a string of seconds).
func TestIntegrationRegistrationTimestamp(t *testing.T) {
	c := newCluster(t)
	kz := c.connect()
	group := kz.Consumergroup("compat")

	inst := group.NewInstance()
	before := time.Now().Unix()
	if err := inst.Register([]string{"orders"}); err != nil {
		t.Fatal(err)
	}
	reg, err := inst.Registration()
	if err != nil {
		t.Fatal(err)
	}
	var ts int64 = reg.Timestamp
	if ts < before || ts > time.Now().Unix() {
		t.Errorf("Timestamp %d is not the registration's Unix second", ts)
	}
	if reg.Pattern != kazoo.RegPatternStatic || reg.Version != kazoo.RegDefaultVersion || reg.Subscription["orders"] != 1 {
		t.Errorf("Registration = %+v", reg)
	}

	const secs = int64(1700000000)
	for id, timestamp := range map[string]string{
		"kazoo-go":    strconv.FormatInt(secs, 10),
		"kafka":       `"` + strconv.FormatInt(secs*1000+999, 10) + `"`,
		"zkgroup-old": `"` + strconv.FormatInt(secs, 10) + `"`,
	} {
		c.write("/consumers/compat/ids/"+id, `{"version":1,"subscription":{"orders":1},"pattern":"static","timestamp":`+timestamp+`}`)
		reg, err := group.Instance(id).Registration()
		if err != nil {
			t.Errorf("registration written like %s: %v", id, err)
			continue
		}
		if reg.Timestamp != secs {
			t.Errorf("registration written like %s: Timestamp %d, want %d", id, reg.Timestamp, secs)
		}
	}
}

// A program that loses its registration (an operator deleted it, or the
// session expired) learns it from the watch, sees ErrInstanceNotRegistered
// and registers again: the loop kazoo-go's users wrote.
func TestIntegrationReregisterOnNotRegistered(t *testing.T) {
	c := newCluster(t)
	kz := c.connect()
	group := kz.Consumergroup("compat")
	inst := group.NewInstance()
	topics := []string{"orders"}
	if err := inst.Register(topics); err != nil {
		t.Fatal(err)
	}

	for round := range 2 {
		_, changed, err := inst.WatchRegistration()
		if err != nil {
			t.Fatal(err)
		}
		c.remove("/consumers/compat/ids/" + inst.ID) // the registration disappears
		ev := <-changed
		if ev.Type != zk.EventNodeDeleted {
			t.Fatalf("round %d: event %v, want %v", round, ev.Type, zk.EventNodeDeleted)
		}
		switch _, _, err := inst.WatchRegistration(); err {
		case kazoo.ErrInstanceNotRegistered:
			if err := inst.Register(topics); err != nil {
				t.Fatalf("round %d: register again: %v", round, err)
			}
		default:
			t.Fatalf("round %d: WatchRegistration after deletion: %v, want ErrInstanceNotRegistered", round, err)
		}
		if ok, err := inst.Registered(); err != nil || !ok {
			t.Fatalf("round %d: Registered after registering again = %v, %v", round, ok, err)
		}
	}

	// A restarted program (a new session) with the same id: the old
	// session's registration is gone once it closes, so Registration says
	// ErrInstanceNotRegistered and Register succeeds.
	if err := kz.Close(); err != nil {
		t.Fatal(err)
	}
	restarted := c.connect().Consumergroup("compat").Instance(inst.ID)
	if _, err := restarted.Registration(); err != kazoo.ErrInstanceNotRegistered {
		t.Fatalf("Registration after the old session closed: %v, want ErrInstanceNotRegistered", err)
	}
	if err := restarted.Register(topics); err != nil {
		t.Fatal(err)
	}
}
