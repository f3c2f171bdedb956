package main

import (
	"fmt"
	"strconv"
	"strings"
)

// parseCuts reads the cut file: one line per cut server, "<id>" or
// "<id> silent|reset" (silent when omitted). Blank lines and lines starting
// with # are ignored.
func parseCuts(text string) (map[int]mode, error) {
	cuts := make(map[int]mode)
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		id, err := strconv.Atoi(f[0])
		if err != nil || id < 1 || len(f) > 2 {
			return nil, fmt.Errorf("cut line %q: want <server id> [silent|reset]", line)
		}
		m := silent
		if len(f) == 2 {
			switch f[1] {
			case "silent":
			case "reset":
				m = reset
			default:
				return nil, fmt.Errorf("cut line %q: mode must be silent or reset", line)
			}
		}
		cuts[id] = m
	}
	return cuts, nil
}

// linkMode is the mode of a link from one server to another: cut when
// either end is, with reset winning over silent.
func linkMode(cuts map[int]mode, from, to int) mode {
	return max(cuts[from], cuts[to])
}

// linkSpec is one link as given on the command line:
// "<kind>:<from>:<to>:<listen port>:<target port>".
type linkSpec struct {
	kind           string
	from, to       int
	listen, target int
}

func parseLinkSpec(s string) (linkSpec, error) {
	f := strings.Split(s, ":")
	if len(f) != 5 || f[0] == "" {
		return linkSpec{}, fmt.Errorf("link %q: want kind:from:to:listenport:targetport", s)
	}
	var n [4]int
	for i, v := range f[1:] {
		x, err := strconv.Atoi(v)
		if err != nil || x < 1 {
			return linkSpec{}, fmt.Errorf("link %q: %q is not a positive number", s, v)
		}
		n[i] = x
	}
	if n[0] == n[1] {
		return linkSpec{}, fmt.Errorf("link %q: a server has no link to itself", s)
	}
	return linkSpec{kind: f[0], from: n[0], to: n[1], listen: n[2], target: n[3]}, nil
}

func (s linkSpec) name() string { return fmt.Sprintf("%s %d->%d", s.kind, s.from, s.to) }
