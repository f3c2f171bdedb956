package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkgroup/kafka/bench/internal/benchstack"
)

// result is one reader's run in its child process.
type result struct {
	took   time.Duration // from creating its client to the end of its Close
	peakKB int64         // the child's peak RSS (ru_maxrss, KiB on Linux)
	cpu    time.Duration // the child's CPU time, user and system, start-up included
}

// rate is messages per second.
func (r result) rate(n int) float64 { return float64(n) / r.took.Seconds() }

// peakMB is the peak RSS in MB (10^6 bytes).
func (r result) peakMB() float64 { return float64(r.peakKB) * 1024 / 1e6 }

// resultPrefix starts the line a child prints its time on.
const resultPrefix = "throughput-result "

// runReader re-executes this program with -child name, so the reader's
// peak RSS is its process's alone, and returns its time and peak RSS.
// With profile set, the child writes its CPU profile there.
func runReader(st benchstack.Stack, name, topic string, n int, timeout time.Duration, profile string) (result, error) {
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	args := []string{"-child", name, "-topic", topic, "-n", strconv.Itoa(n), "-timeout", timeout.String()}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = st.Environ()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("reader %s: %w", name, err)
	}
	var res result
	for line := range strings.Lines(out.String()) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), resultPrefix); ok {
			ns, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return result{}, fmt.Errorf("reader %s: result %q: %w", name, v, err)
			}
			res.took = time.Duration(ns)
		}
	}
	if res.took == 0 {
		return result{}, fmt.Errorf("reader %s printed no result: %q", name, out.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return result{}, fmt.Errorf("reader %s: no rusage", name)
	}
	res.peakKB = ru.Maxrss
	res.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return res, nil
}

// runChild runs one reader in this process and prints its time; with
// profile set, it writes the CPU profile of the read there.
func runChild(st benchstack.Stack, name, topic string, n int, timeout time.Duration, profile string) error {
	read, ok := readers[name]
	if !ok {
		return fmt.Errorf("unknown reader")
	}
	if topic == "" {
		return fmt.Errorf("no -topic")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	group := fmt.Sprintf("bench-%s-%d", name, time.Now().UnixNano())
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	t0 := time.Now()
	if err := read(ctx, st, group, topic, n); err != nil {
		return err
	}
	fmt.Printf("%s%d\n", resultPrefix, time.Since(t0).Nanoseconds())
	return nil
}
