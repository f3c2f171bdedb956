package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/zkgroup/kafka/integration/campaign"
)

// summarizeDirs prints the table over every run directory (seed-*) under
// dirs (a run's directory itself may be given too), each history checked
// again with the current checker; it returns the exit code: 1 if any run
// failed, 2 if none could be read.
func summarizeDirs(w io.Writer, dirs []string, fallback runSettings) int {
	var runDirs []string
	for _, d := range dirs {
		if isRunDir(d) {
			runDirs = append(runDirs, d)
			continue
		}
		found, err := filepath.Glob(filepath.Join(d, "seed-*"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "campaign:", err)
			return 2
		}
		runDirs = append(runDirs, found...)
	}
	slices.Sort(runDirs)
	var runs []runSummary
	fromSummary := 0
	for _, d := range runDirs {
		r, rechecked, err := loadRun(d, fallback)
		if err != nil {
			fmt.Fprintf(w, "skipped %s: %v\n", d, err)
			continue
		}
		if !rechecked {
			fromSummary++
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		fmt.Fprintln(os.Stderr, "campaign: no run found under", strings.Join(dirs, " "))
		return 2
	}
	if fromSummary > 0 {
		fmt.Fprintf(w, "%d runs without history.json: counted from their summary.json, not checked again\n", fromSummary)
	}
	printTable(w, runs)
	for _, r := range runs {
		if r.failed() {
			return 1
		}
	}
	return 0
}

func isRunDir(d string) bool {
	for _, name := range []string{"history.json", "summary.json"} {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return true
		}
	}
	return false
}

var runDirName = regexp.MustCompile(`^seed-(\d+)(\.\d+)?$`)

// errIncomplete marks a run directory with neither a history nor a
// summary: a run stopped before it ended.
var errIncomplete = errors.New("no history.json nor summary.json (a run stopped before its end)")

// loadRun reads the run in dir: its history checked again with the
// settings of its summary.json (fallback for a run saved before runs kept
// one), or its summary.json alone if it has no history (rechecked false).
func loadRun(dir string, fallback runSettings) (r runSummary, rechecked bool, err error) {
	saved, hasSummary, err := readSummary(dir)
	if err != nil {
		return r, false, err
	}
	data, err := os.ReadFile(filepath.Join(dir, "history.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist) && hasSummary:
		saved.dir = dir
		return saved, false, nil
	case errors.Is(err, fs.ErrNotExist):
		return r, false, errIncomplete
	case err != nil:
		return r, false, err
	}
	h := &campaign.History{}
	if err := json.Unmarshal(data, h); err != nil {
		return r, false, fmt.Errorf("history.json: %w", err)
	}
	seed, settings, sendFailures := saved.Seed, saved.Settings, saved.SendFailures
	if !hasSummary {
		m := runDirName.FindStringSubmatch(filepath.Base(dir))
		if m == nil {
			return r, false, fmt.Errorf("no summary.json, and %q does not name a seed", filepath.Base(dir))
		}
		seed, _ = strconv.ParseUint(m[1], 10, 64)
		settings = fallback
		sendFailures = sendFailuresLogged(filepath.Join(dir, "run.log"))
	}
	r, _ = summarize(seed, settings, h, sendFailures)
	r.dir = dir
	return r, true, nil
}

// readSummary reads dir's summary.json, if it has one.
func readSummary(dir string) (s runSummary, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return s, false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	if err != nil {
		return s, false, fmt.Errorf("summary.json: %w", err)
	}
	return s, true, nil
}

// sendFailuresLogged reads the sends that failed from a run.log's
// "producer stopped" line (0 if there is none).
func sendFailuresLogged(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, line, ok := strings.Cut(sc.Text(), "producer stopped: ")
		if !ok {
			continue
		}
		var acked, failed int
		if _, err := fmt.Sscanf(line, "%d acknowledged, %d failed", &acked, &failed); err == nil {
			return failed
		}
	}
	return 0
}
