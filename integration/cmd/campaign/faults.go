package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/zkgroup/kafka/integration/campaign"
)

// injector carries out the steps of a schedule on one run's fleet and
// stack, and notes each fault in the history.
type injector struct {
	o       *options
	fleet   *fleet
	stack   stack
	rec     *recorder
	group   string
	topic   string
	offsets string // the zkgroup-offsets binary
	log     func(format string, args ...any)
}

// apply carries out st: it starts the fault, holds it for st.For and ends
// it. It returns an error when the fault could not be made (the run goes
// on; the fault is not noted).
func (in *injector) apply(st campaign.Step) error {
	start := time.Now()
	victim := fmt.Sprintf("m%d", st.Victim)
	var heal func() error
	switch st.Kind {
	case campaign.KillMember:
		if err := in.fleet.stop(st.Victim, true, time.Second); err != nil {
			return err
		}
		heal = func() error { return in.fleet.start(st.Victim) }
	case campaign.PauseMember:
		if err := in.fleet.signal(st.Victim, syscall.SIGSTOP); err != nil {
			return err
		}
		heal = func() error { return in.fleet.signal(st.Victim, syscall.SIGCONT) }
	case campaign.CutClient:
		if err := in.fleet.cut(st.Victim, true); err != nil {
			return err
		}
		heal = func() error { return in.fleet.cut(st.Victim, false) }
	case campaign.CutFollower:
		id, err := in.stack.follower(st.Victim)
		if err != nil {
			return err
		}
		victim = "zk" + strconv.Itoa(id)
		if _, err := in.stack.run("cut-zk", strconv.Itoa(id)); err != nil {
			return err
		}
		heal = func() error { _, err := in.stack.run("heal-zk", strconv.Itoa(id)); return err }
	case campaign.KillZKLeader:
		id, err := in.stack.leader()
		if err != nil {
			return err
		}
		victim = "zk" + strconv.Itoa(id)
		if _, err := in.stack.run("kill-zk", strconv.Itoa(id)); err != nil {
			return err
		}
		heal = func() error { _, err := in.stack.run("start-zk", strconv.Itoa(id)); return err }
	case campaign.RestartBroker:
		victim = "broker" + strconv.Itoa(st.Victim)
		if _, err := in.stack.run("kill-broker", strconv.Itoa(st.Victim)); err != nil {
			return err
		}
		heal = func() error { _, err := in.stack.run("start-broker", strconv.Itoa(st.Victim)); return err }
	case campaign.Join:
		if err := in.fleet.start(st.Victim); err != nil {
			return err
		}
	case campaign.Leave:
		if err := in.fleet.stop(st.Victim, false, in.o.session+10*time.Second); err != nil {
			return err
		}
	case campaign.ResetOffsets:
		victim = "p" + strconv.Itoa(st.Victim)
		if err := in.reset(int32(st.Victim)); err != nil {
			return err
		}
	}
	f := campaign.Fault{Kind: st.Kind, Victim: victim, Start: start, End: time.Now()}
	if heal != nil {
		time.Sleep(time.Until(start.Add(st.For)))
		if err := heal(); err != nil {
			in.log("heal %s %s: %v", st.Kind, victim, err)
		}
		f.End = time.Now()
	}
	in.rec.note(campaign.Record{Fault: &f})
	in.log("%s %s for %s", st.Kind, victim, f.End.Sub(f.Start).Round(time.Millisecond))
	return nil
}

// reset moves partition's committed offset 20 back, through the offsets
// command, and notes the reset from the command's start to its end.
func (in *injector) reset(partition int32) error {
	rs := campaign.Reset{Partition: partition, At: time.Now()}
	defer func() {
		rs.End = time.Now()
		in.rec.note(campaign.Record{Reset: &rs})
	}()
	cmd := exec.Command(in.offsets, "reset", "-zookeeper", in.o.zk[0], "-group", in.group, "-topic", in.topic,
		"-partitions", strconv.Itoa(int(partition)), "-execute", "-force", "shift", "-20")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("zkgroup-offsets reset: %v: %s", err, out)
	}
	return nil
}
