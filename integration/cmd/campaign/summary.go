package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/zkgroup/kafka/integration/campaign"
)

// runSummary is one row of a campaign's table: what a run did and what its
// check found. Every run saves it as summary.json in its directory, so a
// table over many campaigns (-summarize) needs no history to count a run,
// and the settings to check its history again with the same bounds.
type runSummary struct {
	Seed     uint64           `json:"seed"`
	Settings runSettings      `json:"settings"`
	Start    time.Time        `json:"start"`
	End      time.Time        `json:"end"`    // when the run stopped judging (before the members closed)
	Faults   []campaign.Fault `json:"faults"` // as applied, with their real lengths
	// Acked, Delivered and SendFailures count the producer's and the
	// members' messages.
	Acked        int `json:"acked"`
	Delivered    int `json:"delivered"`
	SendFailures int `json:"send_failures"`
	// Anomalies counts each class found; DuplicatesBy the duplicates by
	// the fault blamed, DuplicatesAllowed what campaign.AllowedDuplicates
	// allows each kind.
	Anomalies         map[campaign.Class]int  `json:"anomalies"`
	DuplicatesBy      map[campaign.Kind]int   `json:"duplicates_by"`
	DuplicatesAllowed map[campaign.Kind]int64 `json:"duplicates_allowed"`
	LongestOrphan     time.Duration           `json:"longest_orphan"`
	OrphanPartition   int32                   `json:"orphan_partition"`
	// Error is why the run could not be checked ("": it was).
	Error string `json:"error,omitempty"`

	dir string // where it was read from or saved
}

// runSettings are the flags that shape a run and the bounds of its check.
type runSettings struct {
	Duration       time.Duration   `json:"duration"`
	Members        int             `json:"members"`
	Partitions     int             `json:"partitions"`
	Rate           int             `json:"rate"`
	Session        time.Duration   `json:"session"`
	OrphanBound    time.Duration   `json:"orphan_bound"`
	CommitInterval time.Duration   `json:"commit_interval"`
	Kinds          []campaign.Kind `json:"kinds,omitempty"`
	MessagesBuffer int             `json:"messages_buffer,omitempty"`
}

func (o *options) settings() runSettings {
	return runSettings{Duration: o.duration, Members: o.members, Partitions: o.partitions, Rate: o.rate,
		Session: o.session, OrphanBound: o.orphan, CommitInterval: commitInterval, Kinds: o.kinds,
		MessagesBuffer: o.buffer}
}

// bounds are the limits a run with these settings is held to.
func (s runSettings) bounds() campaign.Bounds {
	return campaign.Bounds{
		Orphan: s.OrphanBound,
		Rewind: campaign.RewindBound(float64(s.Rate)/float64(s.Partitions), s.CommitInterval, s.Session, 10),
		Window: s.CommitInterval + s.Session,
	}
}

// summarize checks h with the settings' bounds and fills the row; it
// returns the check's report too.
func summarize(seed uint64, s runSettings, h *campaign.History, sendFailures int) (runSummary, *campaign.Report) {
	b := s.bounds()
	r := campaign.Check(h, b)
	sum := runSummary{Seed: seed, Settings: s, Start: h.Start, End: h.End, Faults: h.Faults,
		Acked: r.Acked, Delivered: r.Delivered, SendFailures: sendFailures,
		Anomalies: make(map[campaign.Class]int), DuplicatesBy: r.DuplicatesBy,
		DuplicatesAllowed: campaign.AllowedDuplicates(h, b),
		LongestOrphan:     r.LongestOrphan, OrphanPartition: r.OrphanPartition}
	for c, as := range r.Anomalies {
		if len(as) > 0 {
			sum.Anomalies[c] = len(as)
		}
	}
	return sum, r
}

// failed reports whether the run could not be checked or found an anomaly
// not tolerated.
func (s runSummary) failed() bool {
	if s.Error != "" {
		return true
	}
	for c, n := range s.Anomalies {
		if n > 0 && !c.Tolerated() {
			return true
		}
	}
	return false
}

func (s runSummary) save(dir string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644)
}
