package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/zkgroup/kafka/internal/offsets"
)

// cmdImport sets a group's offsets from an OffsetsFile, through fenced
// resets.
func cmdImport(args []string, out, errOut io.Writer) error {
	c := newCLI("import", "import [-group G] [-storage S] [-clamp] [-json] [-execute [-force]] FILE|-").withStorage()
	clampFlag := c.fs.Bool("clamp", false, "move offsets outside [earliest, high-water mark] into it instead of refusing")
	execute := c.fs.Bool("execute", false, "write the offsets (default: dry run)")
	force := c.fs.Bool("force", false, "write even while instances are registered in the group (zookeeper storage only)")
	asJSON := c.fs.Bool("json", false, "print the plan as JSON (notes go to standard error)")
	c.groupOptional = true
	if err := c.parse(args, 1, 1); err != nil {
		return err
	}
	f, err := openOffsetsFile(c.fs.Arg(0))
	if err != nil {
		return err
	}
	group := c.group
	if group == "" {
		group = f.Group
	}
	if group == "" {
		return c.usageErr("the export names no group: give -group")
	}

	e, err := c.connect()
	if err != nil {
		return err
	}
	defer e.close()
	p := newPlanner(out, errOut, *asJSON)
	cg := e.kz.Consumergroup(group)
	exists, err := cg.Exists()
	if err != nil {
		return err
	}
	stored, err := e.readStores(group)
	if err != nil {
		return err
	}
	committed, err := stored.inUse(c.storage)
	if err != nil {
		return err
	}
	warnAhead(p.notes, c.storage, stored)
	if !exists && c.storage != offsets.KindKafka {
		fmt.Fprintf(p.notes, "note: group %s does not exist in ZooKeeper; -execute creates it\n", group)
	}
	if group != f.Group {
		fmt.Fprintf(p.notes, "note: importing the offsets of group %s into group %s\n", f.Group, group)
	}

	var changes []change
	var errs []error
	for topic, parts := range f.Offsets {
		want, err := e.namedPartitions(topic, parts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range want {
			off := parts[p]
			earliest, latest, err := e.offsetRange(topic, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ch := change{Topic: topic, Partition: p, Before: committedPtr(committed, topic, p), After: off}
			if off < earliest || off > latest {
				if !*clampFlag {
					errs = append(errs, &OutOfRangeError{Topic: topic, Partition: p, Offset: off, Earliest: earliest, Latest: latest})
					continue
				}
				ch.After = clamp(off, earliest, latest)
				ch.Note = fmt.Sprintf("clamped from %d into [%d, %d]", off, earliest, latest)
			}
			changes = append(changes, ch)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("nothing written:\n%w", err)
	}
	return e.apply(p, cg, c.storage, changes, *execute, *force)
}

func openOffsetsFile(name string) (*OffsetsFile, error) {
	if name == "-" {
		return readOffsetsFile(os.Stdin)
	}
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := readOffsetsFile(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}
