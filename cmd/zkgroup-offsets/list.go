package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// GroupSummary is one row of list (and an element of its -json array).
type GroupSummary struct {
	Group     string `json:"group"`
	Instances int    `json:"instances"` // registered in ZooKeeper
	ZooKeeper int    `json:"zookeeper_offsets"`
	Kafka     *int   `json:"kafka_offsets"` // null: Kafka could not be read
	Error     string `json:"error,omitempty"`
}

// cmdList prints the consumer groups registered in ZooKeeper, with their
// instances and how many offsets each store holds for them.
func cmdList(args []string, out, errOut io.Writer) error {
	c := newCLI("list", "list [-json]")
	c.groupOptional = true
	asJSON := c.fs.Bool("json", false, "print JSON instead of a table")
	if err := c.parse(args, 0, 0); err != nil {
		return err
	}
	if c.group != "" {
		return c.usageErr("list takes no -group")
	}
	e, err := c.connect()
	if err != nil {
		return err
	}
	defer e.close()
	groups, err := e.kz.Consumergroups()
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	rows := make([]GroupSummary, 0, len(groups))
	for _, cg := range groups {
		row := GroupSummary{Group: cg.Name}
		ids, err := registered(cg)
		if err != nil {
			row.Error = err.Error()
		}
		row.Instances = len(ids)
		s, err := e.readStores(cg.Name)
		if err != nil {
			row.Error = err.Error()
		}
		row.ZooKeeper = count(s.zk)
		if s.kafkaErr == nil && err == nil {
			n := count(s.kafka)
			row.Kafka = &n
		}
		rows = append(rows, row)
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tINSTANCES\tZOOKEEPER-OFFSETS\tKAFKA-OFFSETS\tNOTE")
	for _, r := range rows {
		kafka := "-"
		if r.Kafka != nil {
			kafka = fmt.Sprint(*r.Kafka)
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\n", r.Group, r.Instances, r.ZooKeeper, kafka, r.Error)
	}
	return w.Flush()
}

// count is the number of partitions offsets holds.
func count(offsets map[string]map[int32]int64) int {
	n := 0
	for _, parts := range offsets {
		n += len(parts)
	}
	return n
}
