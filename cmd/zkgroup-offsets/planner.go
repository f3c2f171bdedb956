package main

import (
	"encoding/json"
	"io"
)

// planner prints what a writing command would do: the plan as a table, or
// with -json as one JSON document (planDoc), and its notes (warnings, the
// dry-run line, the result) as text lines, to standard error under -json
// so that standard output stays one document.
type planner struct {
	out   io.Writer
	notes io.Writer
	json  bool
}

func newPlanner(out, errOut io.Writer, asJSON bool) planner {
	if asJSON {
		return planner{out: out, notes: errOut, json: true}
	}
	return planner{out: out, notes: out}
}

// planDoc is the -json form of a plan.
type planDoc struct {
	Group   string   `json:"group"`
	Storage string   `json:"storage"`
	Execute bool     `json:"execute"` // false: a dry run, nothing written
	Changes []change `json:"changes"`
}

func (p planner) print(d planDoc) error {
	if !p.json {
		return printPlan(p.out, d.Changes)
	}
	if d.Changes == nil {
		d.Changes = []change{}
	}
	enc := json.NewEncoder(p.out)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}
