package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/integration/campaign"
)

// runResult is the outcome of one run.
type runResult struct {
	seed     uint64
	schedule campaign.Schedule
	applied  map[campaign.Kind]int
	report   *campaign.Report
	failedTx int // sends the producer saw fail
	dir      string
	err      error
}

// failed reports whether the run could not be checked or found an anomaly
// not tolerated.
func (r runResult) failed() bool { return r.err != nil || (r.report != nil && r.report.Failed()) }

// runOnce runs the schedule of seed against a fresh topic and group, then
// waits for every acknowledged message, stops the members and checks the
// history. Everything the run writes goes under o.out/seed-<seed>.
func runOnce(o *options, seed uint64) runResult {
	res := runResult{seed: seed, schedule: campaign.Generate(seed, o.scheduleConfig()), applied: make(map[campaign.Kind]int)}
	res.dir = filepath.Join(o.out, fmt.Sprintf("seed-%d", seed))
	res.err = execute(o, &res)
	return res
}

func execute(o *options, res *runResult) error {
	if err := os.RemoveAll(res.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(res.dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(res.dir, "schedule.txt"), []byte(res.schedule.String()), 0o644); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(res.dir, "run.log"))
	if err != nil {
		return err
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
		return err
	}
	offsetsBin := filepath.Join(o.out, "zkgroup-offsets")
	if _, err := os.Stat(offsetsBin); err != nil {
		if out, err := exec.Command("go", "build", "-o", offsetsBin, "github.com/zkgroup/kafka/cmd/zkgroup-offsets").CombinedOutput(); err != nil {
			return fmt.Errorf("build zkgroup-offsets: %v: %s", err, out)
		}
	}

	h := &campaign.History{Partitions: partitions, Start: time.Now()}
	rec, err := startRecorder(o.zk, group, topic, partitions, h)
	if err != nil {
		return err
	}
	fl, err := newFleet(o, res.dir, group, topic)
	if err != nil {
		rec.close()
		return err
	}
	pr, err := startProducer(o.brokers, topic, partitions, o.rate, res.seed)
	if err != nil {
		rec.close()
		return err
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
		res.applied[st.Kind]++
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
		return err
	}
	res.report = campaign.Check(h, o.bounds())
	return writeReport(res, h)
}

// bounds are the limits every run's history is held to.
func (o *options) bounds() campaign.Bounds {
	return campaign.Bounds{
		Orphan: o.orphan,
		Rewind: campaign.RewindBound(float64(o.rate)/float64(o.partitions), commitInterval, o.session, 10),
	}
}

// recheck checks the history.json of o.recheck again, with the bounds of
// the flags given (the run's own by default), and prints its anomalies.
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
	r := campaign.Check(h, o.bounds())
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
