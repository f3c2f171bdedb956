package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// cmdExport writes a group's committed offsets as an OffsetsFile.
func cmdExport(args []string, out, errOut io.Writer) error {
	c := newCLI("export", "export -group G [-storage S] [-topic T,...] [-o FILE]").withStorage()
	topicsFlag := c.fs.String("topic", "", "only these topics (`T1,T2`)")
	output := c.fs.String("o", "", "write to `FILE` instead of standard output")
	if err := c.parse(args, 0, 0); err != nil {
		return err
	}
	e, err := c.connect()
	if err != nil {
		return err
	}
	defer e.close()
	cg, committed, stored, err := e.storedOffsets(c.group, c.storage)
	if err != nil {
		return err
	}
	// The export goes to out unless -o is given: warnings go to errOut.
	warnAhead(errOut, c.storage, stored)
	if topics := splitList(*topicsFlag); len(topics) > 0 {
		picked := make(map[string]map[int32]int64)
		for _, t := range topics {
			if len(committed[t]) == 0 {
				return fmt.Errorf("group %s has no committed offsets for topic %q", cg.Name, t)
			}
			picked[t] = committed[t]
		}
		committed = picked
	}
	if len(committed) == 0 {
		return fmt.Errorf("group %s has no committed offsets", cg.Name)
	}
	f := OffsetsFile{Version: offsetsFileVersion, Group: cg.Name, ExportedAt: time.Now().UTC().Format(time.RFC3339), Offsets: committed}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if *output == "" {
		_, err = out.Write(data)
		return err
	}
	if err := os.WriteFile(*output, data, 0o644); err != nil {
		return err
	}
	n := 0
	for _, parts := range committed {
		n += len(parts)
	}
	fmt.Fprintf(out, "exported %d offsets of group %s to %s\n", n, cg.Name, *output)
	return nil
}
