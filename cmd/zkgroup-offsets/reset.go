package main

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// cmdReset moves a group's offsets to a target, per topic or for all its
// topics, optionally for some partitions only.
func cmdReset(args []string, out, errOut io.Writer) error {
	c := newCLI("reset", "reset -group G [-storage S] (-topic T[,T...] [-partitions P,...] | -all-topics) [-json] [-execute [-force]] (TARGET | -by-duration D)").withStorage()
	c.help = targetForms
	topicsFlag := c.fs.String("topic", "", "topics to reset (`T1,T2`)")
	allTopics := c.fs.Bool("all-topics", false, "reset every topic of the group (committed, owned or subscribed)")
	partitionsFlag := c.fs.String("partitions", "", "only these partitions (`0,1,...`) of the one -topic")
	execute := c.fs.Bool("execute", false, "write the offsets (default: dry run)")
	force := c.fs.Bool("force", false, "write even while instances are registered in the group (zookeeper storage only)")
	byDuration := c.fs.String("by-duration", "", "instead of a TARGET: the first offset at or after now minus `D` (1h, 90m, 2h30m)")
	asJSON := c.fs.Bool("json", false, "print the plan as JSON (notes go to standard error)")
	if err := c.parse(args, 0, 2); err != nil {
		return err
	}
	var tgt target
	var err error
	switch {
	case *byDuration != "" && c.fs.NArg() > 0:
		return c.usageErr("give -by-duration or a TARGET, not both")
	case *byDuration != "":
		if tgt, err = durationTarget(*byDuration, time.Now()); err != nil {
			return c.usageErr("-by-duration: " + err.Error())
		}
	default:
		if tgt, err = parseTarget(c.fs.Args()); err != nil {
			return c.usageErr(err.Error())
		}
	}
	topics := splitList(*topicsFlag)
	if (len(topics) == 0) == !*allTopics {
		return c.usageErr("give exactly one of -topic and -all-topics")
	}
	want, err := parsePartitions(*partitionsFlag)
	if err != nil {
		return c.usageErr("-partitions: " + err.Error())
	}
	if len(want) > 0 && len(topics) != 1 {
		return c.usageErr("-partitions needs exactly one -topic")
	}

	e, err := c.connect()
	if err != nil {
		return err
	}
	defer e.close()
	p := newPlanner(out, errOut, *asJSON)
	cg, committed, stored, err := e.storedOffsets(c.group, c.storage)
	if err != nil {
		return err
	}
	warnAhead(p.notes, c.storage, stored)
	if *allTopics {
		if topics, err = e.topicsOf(cg, committed); err != nil {
			return err
		}
		if len(topics) == 0 {
			return fmt.Errorf("group %s has no topics: no committed offsets, owners or subscriptions (name them with -topic)", cg.Name)
		}
	}

	var changes []change
	var errs []error
	for _, topic := range topics {
		all, err := e.partitions(topic)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sel, err := selectPartitions(topic, all, want)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range sel {
			earliest, latest, err := e.offsetRange(topic, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			st := partitionState{topic: topic, partition: p, committed: -1, earliest: earliest, latest: latest}
			before := committedPtr(committed, topic, p)
			if before != nil {
				st.committed = *before
			}
			after, err := tgt.resolve(st, func(ms int64) (int64, error) { return e.client.GetOffset(topic, p, ms) })
			if err != nil {
				errs = append(errs, err)
				continue
			}
			changes = append(changes, change{Topic: topic, Partition: p, Before: before, After: after,
				Note: fmt.Sprintf("%s; range [%d, %d]", tgt, earliest, latest)})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("nothing written:\n%w", err)
	}
	return e.apply(p, cg, c.storage, changes, *execute, *force)
}
