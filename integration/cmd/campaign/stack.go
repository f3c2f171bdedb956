package main

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// stack runs integration/stack.sh commands on the stack the environment
// describes.
type stack struct{ script string }

func (s stack) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", append([]string{s.script}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("stack.sh %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// leader returns the id of the ensemble's leader.
func (s stack) leader() (int, error) {
	out, err := s.run("zk-leader")
	if err != nil {
		return 0, err
	}
	lines := strings.Split(out, "\n")
	return strconv.Atoi(strings.TrimSpace(lines[len(lines)-1]))
}

// follower returns the id of the i-th follower (0 or 1) by id.
func (s stack) follower(i int) (int, error) {
	l, err := s.leader()
	if err != nil {
		return 0, err
	}
	var fs []int
	for id := 1; id <= 3; id++ {
		if id != l {
			fs = append(fs, id)
		}
	}
	slices.Sort(fs)
	return fs[i%len(fs)], nil
}
