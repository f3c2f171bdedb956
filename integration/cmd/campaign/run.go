package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/integration/campaign"
)

// runResult is what one run carries out.
type runResult struct {
	seed     uint64
	schedule campaign.Schedule
	failedTx int // sends the producer saw fail
	dir      string
}

// runOnce runs the schedule of seed against a fresh topic and group, then
// waits for every acknowledged message, stops the members and checks the
// history. Everything the run writes goes under its own directory of o.out
// (runDir), summary.json last, whatever the outcome.
func runOnce(o *options, seed uint64) runSummary {
	res := runResult{seed: seed, schedule: campaign.Generate(seed, o.scheduleConfig())}
	sum := runSummary{Seed: seed, Settings: o.settings()}
	dir, err := runDir(o.out, seed)
	if err != nil {
		sum.Error = err.Error()
		return sum
	}
	res.dir = dir
	h, err := execute(o, &res)
	if err == nil {
		var r *campaign.Report
		sum, r = summarize(seed, o.settings(), h, res.failedTx)
		err = writeReport(dir, h, r)
	}
	if err != nil {
		sum.Error = err.Error()
	}
	sum.dir = dir
	if err := sum.save(dir); err != nil {
		fmt.Fprintf(os.Stderr, "seed %d: %v\n", seed, err)
	}
	return sum
}

// runDir makes the directory of a run of seed under out: seed-<S>, or
// seed-<S>.<n> for its n-th run there, so a replay keeps the runs before.
func runDir(out string, seed uint64) (string, error) {
	dir := filepath.Join(out, fmt.Sprintf("seed-%d", seed))
	for n := 2; ; n++ {
		err := os.Mkdir(dir, 0o755)
		if !errors.Is(err, fs.ErrExist) {
			return dir, err
		}
		dir = filepath.Join(out, fmt.Sprintf("seed-%d.%d", seed, n))
	}
}

// execute runs res's schedule and returns the history, not yet checked.
func execute(o *options, res *runResult) (*campaign.History, error) {
	if err := os.WriteFile(filepath.Join(res.dir, "schedule.txt"), []byte(res.schedule.String()), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(res.dir, "run.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	logStart := time.Now()
	log := func(format string, args ...any) {
		fmt.Fprintf(logf, "%7.3fs %s\n", time.Since(logStart).Seconds(), fmt.Sprintf(format, args...))
	}
	stamp := strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36)
	topic := fmt.Sprintf("campaign.%d.%s", res.seed, stamp)
	group := fmt.Sprintf("campaign-%d-%s", res.seed, stamp)
	partitions := int32(o.partitions)
	if err := createTopic(o.brokers, topic, partitions); err != nil {
		return nil, err
	}
	offsetsBin := filepath.Join(o.out, "zkgroup-offsets")
	if _, err := os.Stat(offsetsBin); err != nil {
		if out, err := exec.Command("go", "build", "-o", offsetsBin, "github.com/zkgroup/kafka/cmd/zkgroup-offsets").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build zkgroup-offsets: %v: %s", err, out)
		}
	}

	h := &campaign.History{Partitions: partitions, Start: time.Now()}
	rec, err := startRecorder(o.zk, group, topic, partitions, h)
	if err != nil {
		return nil, err
	}
	fl, err := newFleet(o, res.dir, group, topic)
	if err != nil {
		rec.close()
		return nil, err
	}
	pr, err := startProducer(o.brokers, topic, partitions, o.rate, res.seed)
	if err != nil {
		rec.close()
		return nil, err
	}
	for slot := range o.members {
		if err := fl.start(slot); err != nil {
			log("start member %d: %v", slot, err)
		}
	}
	in := &injector{o: o, fleet: fl, stack: stack{script: o.stackScript}, rec: rec, group: group, topic: topic, offsets: offsetsBin, log: log}
	begin := time.Now()
	for _, st := range res.schedule.Steps {
		time.Sleep(time.Until(begin.Add(st.At)))
		if err := in.apply(st); err != nil {
			log("%v: not applied: %v", st, err)
			continue
		}
	}
	time.Sleep(time.Until(begin.Add(o.duration)))
	acked, failed := pr.stop()
	res.failedTx = failed
	log("producer stopped: %d acknowledged, %d failed", len(acked), failed)
	waitDrained(res.dir, acked, o.drain, log)
	h.End = time.Now() // what follows, the members closing, is not judged
	fl.close(o.session + 10*time.Second)
	rec.close()
	h.Acked = acked
	if err := readDeliveries(res.dir, h); err != nil {
		return nil, err
	}
	return h, nil
}

// recheck checks the history.json of o.recheck again, with the bounds of
// the run's settings (its summary.json; the flags' for a run saved before
// runs kept one), and prints its anomalies.
func recheck(o *options) int {
	data, err := os.ReadFile(filepath.Join(o.recheck, "history.json"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		return 2
	}
	h := &campaign.History{}
	if err := json.Unmarshal(data, h); err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		return 2
	}
	settings := o.settings()
	if saved, ok, err := readSummary(o.recheck); err == nil && ok {
		settings = saved.Settings // the run's own bounds
	}
	r := campaign.Check(h, settings.bounds())
	for _, c := range campaign.Classes {
		fmt.Printf("%-22s %d\n", c, r.Count(c))
		if !c.Tolerated() {
			for _, a := range r.Anomalies[c] {
				fmt.Printf("  %s %s\n", a.At.Format("15:04:05.000"), a)
			}
		}
	}
	fmt.Printf("duplicates by fault: %v\nlongest orphan: %s (partition %d)\n", r.DuplicatesBy, r.LongestOrphan.Round(time.Millisecond), r.OrphanPartition)
	if r.Failed() {
		return 1
	}
	return 0
}

func createTopic(brokers []string, topic string, partitions int32) error {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	admin, err := sarama.NewClusterAdmin(brokers, cfg)
	if err != nil {
		return err
	}
	defer admin.Close()
	minISR := "2"
	return admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 3,
		ConfigEntries: map[string]*string{"min.insync.replicas": &minISR}}, false)
}

// waitDrained waits until the members' files hold every acknowledged
// message, or for at most limit.
func waitDrained(dir string, acked []campaign.Ack, limit time.Duration, log func(string, ...any)) {
	deadline := time.Now().Add(limit)
	for {
		h := &campaign.History{}
		if err := readDeliveries(dir, h); err == nil {
			seen := make(map[[2]int64]bool, len(h.Deliveries))
			for _, d := range h.Deliveries {
				seen[[2]int64{int64(d.Partition), d.Offset}] = true
			}
			missing := 0
			for _, a := range acked {
				if !seen[[2]int64{int64(a.Partition), a.Offset}] {
					missing++
				}
			}
			if missing == 0 || time.Now().After(deadline) {
				log("drained: %d acknowledged messages not delivered", missing)
				return
			}
		}
		time.Sleep(time.Second)
	}
}

// readDeliveries adds the deliveries in every member's file under dir.
func readDeliveries(dir string, h *campaign.History) error {
	files, err := filepath.Glob(filepath.Join(dir, "m*.jsonl"))
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := h.ReadRecords(f); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		f.Close()
	}
	return errors.Join(errs...)
}
