package coord

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// A static member that registers again just as an instance's deletion of
// its reservation (its window ended) reaches ZooKeeper, before it wrote
// the reservation again, is back: the deletion is refused, and the
// instance keeps the share reserved and reads again, reporting nothing. A
// refusal taken for a failed read of the group would be reported on
// Errors() and skip the rebalance, in every instance whose window ended
// then.
func TestIntegrationReservationDeletionMeetsRegisteredMember(t *testing.T) {
	testenv.Integration(t)
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	group := kz.Consumergroup(testenv.UniqueName("static-back"))
	if err := group.Create(); err != nil {
		t.Fatal(err)
	}

	// c registers with a window of 1 ms, then leaves: its reservation stays.
	cz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cz.Consumergroup(group.Name).StaticInstance("c", time.Millisecond).Register([]string{"t"}); err != nil {
		t.Fatal(err)
	}
	_ = cz.Close()

	back, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil) // c's next session
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	res := &registeringBeforeDelete{Reservations: KazooReservations(group), register: func() error {
		return back.Consumergroup(group.Name).Instance("c").Register([]string{"t"})
	}}

	var mu sync.Mutex
	var reported []error
	self := group.Instance("b")
	stop := make(chan struct{})
	done := make(chan struct{})
	l := New(Config{InstanceID: "b", Strategy: "range-by-id", RetryCooldown: time.Second, RegisterTimeout: time.Second, Topics: []string{"t"}}, Deps{
		ZooKeeper:    Kazoo(kz, group, func() error { return self.Register([]string{"t"}) }),
		Reservations: res,
		Topics:       fixedTopics{"t": {{ID: 0, Leader: 1}, {ID: 1, Leader: 1}}},
		Workers:      &fakeWorkers{},
		Stop:         stop,
		Log:          slog.New(slog.DiscardHandler),
		Report: func(_ string, _ int32, err error) {
			mu.Lock()
			reported = append(reported, err)
			mu.Unlock()
		},
		RegistrationPath: func(id string) string { return "/consumers/" + group.Name + "/ids/" + id },
		Metrics:          nopMetrics{},
	})
	if err := self.Register([]string{"t"}); err != nil {
		t.Fatal(err)
	}
	go func() { l.Run(); close(done) }()

	deadline := time.Now().Add(10 * time.Second)
	for !res.tried() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the reads that follow
	close(stop)
	<-done
	if !res.tried() {
		t.Fatal("the reservation's deletion was never tried")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, err := range reported {
		t.Errorf("reported: %v", err)
	}
}

// registeringBeforeDelete is Reservations where the member registers (its
// ids node only, as a registration does first) just before the first
// deletion of its reservation.
type registeringBeforeDelete struct {
	Reservations
	register func() error

	mu   sync.Mutex
	done bool
}

func (r *registeringBeforeDelete) DeleteReservation(id string, version int32) error {
	r.mu.Lock()
	first := !r.done
	r.done = true
	r.mu.Unlock()
	if first {
		if err := r.register(); err != nil {
			return err
		}
	}
	return r.Reservations.DeleteReservation(id, version)
}

func (r *registeringBeforeDelete) tried() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}
