package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// clearScreen moves the cursor home and clears the terminal (ANSI).
const clearScreen = "\x1b[H\x1b[2J"

// view draws the state of the run once a second: as a full screen redrawn
// in place (live), or as one plain line a second plus the new events.
type view struct {
	out      io.Writer
	live     bool
	header   string
	members  []*member
	ledger   *ledger
	owners   *owners
	timeline *timeline
	status   func() string // what the script does now and next
	isCut    func(member int) bool

	lastAt        time.Duration
	lastDelivered []int64
	lastProduced  int64
	shownEvents   int
}

// memberRow is one member's line of the view.
type memberRow struct {
	id         int
	zookeeper  string // connected, CUT OFF
	delivery   string // flowing, FENCED, idle, waiting
	partitions []int
	rate       float64
	lag        int64
}

// draw renders the view for the current instant.
func (v *view) draw() {
	v.timeline.flush()
	now := v.ledger.since()
	g := v.ledger.gauges()
	own := v.owners.snapshot()
	dt := (now - v.lastAt).Seconds()
	if v.lastDelivered == nil || dt <= 0 {
		v.lastDelivered, dt = make([]int64, len(g.delivered)), 1
	}

	rows := make([]memberRow, 0, len(v.members))
	for _, m := range v.members {
		r := memberRow{id: m.id, zookeeper: "connected", rate: float64(g.delivered[m.id]-v.lastDelivered[m.id]) / dt}
		if v.isCut(m.id) {
			r.zookeeper = "CUT OFF"
		}
		for p, o := range own {
			if o == m.id {
				r.partitions = append(r.partitions, p)
				r.lag += g.lag[p]
			}
		}
		_, fenced := m.state.snapshot()
		switch {
		case fenced:
			r.delivery = "FENCED"
		case len(r.partitions) == 0:
			r.delivery = "idle"
		case r.rate == 0 && r.lag > 0:
			r.delivery = "waiting"
		default:
			r.delivery = "flowing"
		}
		rows = append(rows, r)
	}
	var unowned []int
	var unownedLag int64
	for p, o := range own {
		if o <= 0 {
			unowned = append(unowned, p)
			unownedLag += g.lag[p]
		}
	}
	produceRate := float64(g.produced-v.lastProduced) / dt
	v.lastAt, v.lastDelivered, v.lastProduced = now, g.delivered, g.produced

	if v.live {
		v.drawLive(now, g.produced, produceRate, rows, unowned, unownedLag)
	} else {
		v.drawPlain(now, g.produced, produceRate, rows, unowned, unownedLag)
	}
}

func (v *view) drawLive(now time.Duration, produced int64, rate float64, rows []memberRow, unowned []int, unownedLag int64) {
	var b strings.Builder
	b.WriteString(clearScreen)
	fmt.Fprintf(&b, "%s\n\n", v.header)
	fmt.Fprintf(&b, "t=%.0fs   produced %d (%.0f/s)   %s\n\n", now.Seconds(), produced, rate, v.status())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "member\tZooKeeper\tdelivery\tpartitions owned\tmsg/s\tlag\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.0f\t%d\t\n", r.id, r.zookeeper, r.delivery, partitionList(r.partitions), r.rate, r.lag)
	}
	fmt.Fprintf(tw, "\t\t\t%s\t\t%d\t\n", "unowned: "+partitionList(unowned), unownedLag)
	_ = tw.Flush()
	b.WriteString("\nlatest events\n")
	for _, e := range v.timeline.last(14) {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	_, _ = io.WriteString(v.out, b.String())
}

func (v *view) drawPlain(now time.Duration, produced int64, rate float64, rows []memberRow, unowned []int, unownedLag int64) {
	var b strings.Builder
	events, next := v.timeline.since(v.shownEvents)
	v.shownEvents = next
	for _, e := range events {
		fmt.Fprintf(&b, "  %s\n", e)
	}
	fmt.Fprintf(&b, "t=%3.0fs produced=%d (%.0f/s)", now.Seconds(), produced, rate)
	for _, r := range rows {
		fmt.Fprintf(&b, " | m%d %2dp %4.0f/s lag %d", r.id, len(r.partitions), r.rate, r.lag)
		if r.zookeeper != "connected" {
			b.WriteString(" " + r.zookeeper)
		}
		if r.delivery == "FENCED" || r.delivery == "waiting" {
			b.WriteString(" " + r.delivery)
		}
	}
	fmt.Fprintf(&b, " | unowned %dp lag %d\n", len(unowned), unownedLag)
	_, _ = io.WriteString(v.out, b.String())
}

// partitionList formats partitions as "0-3 7 9-10", or "-" for none.
func partitionList(ps []int) string {
	if len(ps) == 0 {
		return "-"
	}
	var parts []string
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(ps[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ps[i], ps[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}
