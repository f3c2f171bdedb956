package campaign

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// History is what one campaign run recorded. Times come from one machine's
// clock (every process of a run shares it).
type History struct {
	// Partitions is the partition count of the topic consumed.
	Partitions int32 `json:"partitions"`
	// Acked are the messages the producer had acknowledged.
	Acked []Ack `json:"acked"`
	// Deliveries are the messages members handed to the application.
	Deliveries []Delivery `json:"deliveries"`
	// Commits are the states of the committed offset nodes, as seen.
	Commits []Commit `json:"commits"`
	// Epochs are the partitions' claim epochs, as seen.
	Epochs []Epoch `json:"epochs"`
	// Owners are the intervals during which a partition had an owner node.
	Owners []Ownership `json:"owners"`
	// Resets are the offset resets the campaign made.
	Resets []Reset `json:"resets"`
	// Faults are the faults injected.
	Faults []Fault `json:"faults"`
	// Start and End bound the run; orphans are measured up to End.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Ack is one message the producer had acknowledged.
type Ack struct {
	Partition int32     `json:"p"`
	Offset    int64     `json:"o"`
	Value     string    `json:"v"`
	At        time.Time `json:"at"`
}

// Delivery is one message a member handed to the application. Reader names
// the process incarnation (a restarted member is a new reader); Epoch is the
// epoch of the claim the message came under, -1 if unknown.
type Delivery struct {
	Reader    string    `json:"r"`
	Partition int32     `json:"p"`
	Offset    int64     `json:"o"`
	Value     string    `json:"v"`
	Epoch     int64     `json:"e"`
	At        time.Time `json:"at"`
}

// Commit is one state of a partition's committed offset node: Value is the
// next offset to consume (-1: the node was deleted), Zxid the transaction
// that wrote it.
type Commit struct {
	Partition int32     `json:"p"`
	Value     int64     `json:"v"`
	Version   int32     `json:"ver"`
	Zxid      int64     `json:"zxid"`
	At        time.Time `json:"at"`
}

// Epoch is one state of a partition's epoch node: Epoch is its version,
// set by the transaction Zxid.
type Epoch struct {
	Partition int32     `json:"p"`
	Epoch     int64     `json:"e"`
	Zxid      int64     `json:"zxid"`
	At        time.Time `json:"at"`
}

// Ownership is an interval during which Owner held partition's owner
// node. A zero To means it still held it when recording ended.
type Ownership struct {
	Partition int32     `json:"p"`
	Owner     string    `json:"owner"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
}

// Reset is an offset reset of Partition (-1: every partition), made
// between At and End (zero: an instant at At): a command that plans and
// then writes takes a while, and the write lands anywhere in between.
type Reset struct {
	Partition int32     `json:"p"`
	At        time.Time `json:"at"`
	End       time.Time `json:"end"`
}

// Fault is one injected fault, from Start to End: for a fault without a
// hold (a join, a leave, a reset), End is when the action completed.
type Fault struct {
	Kind   Kind      `json:"kind"`
	Victim string    `json:"victim"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
}

// Record is one line of a history file: exactly one field is set. Members
// and the recorder append records as they go, so a process killed with
// SIGKILL loses at most its last unflushed lines, never the file.
type Record struct {
	Ack       *Ack       `json:"ack,omitempty"`
	Delivery  *Delivery  `json:"delivery,omitempty"`
	Commit    *Commit    `json:"commit,omitempty"`
	Epoch     *Epoch     `json:"epoch,omitempty"`
	Ownership *Ownership `json:"owner,omitempty"`
	Reset     *Reset     `json:"reset,omitempty"`
	Fault     *Fault     `json:"fault,omitempty"`
}

// ReadRecords adds the records of r (one JSON object a line) to h. A last
// line cut short (a writer killed mid-line) is ignored; any other bad line
// is an error.
func (h *History) ReadRecords(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var pending error
	for line := 1; sc.Scan(); line++ {
		if pending != nil {
			return pending
		}
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			pending = fmt.Errorf("line %d: %w", line, err)
			continue
		}
		h.add(rec)
	}
	return sc.Err()
}

func (h *History) add(rec Record) {
	switch {
	case rec.Ack != nil:
		h.Acked = append(h.Acked, *rec.Ack)
	case rec.Delivery != nil:
		h.Deliveries = append(h.Deliveries, *rec.Delivery)
	case rec.Commit != nil:
		h.Commits = append(h.Commits, *rec.Commit)
	case rec.Epoch != nil:
		h.Epochs = append(h.Epochs, *rec.Epoch)
	case rec.Ownership != nil:
		h.Owners = append(h.Owners, *rec.Ownership)
	case rec.Reset != nil:
		h.Resets = append(h.Resets, *rec.Reset)
	case rec.Fault != nil:
		h.Faults = append(h.Faults, *rec.Fault)
	}
}
