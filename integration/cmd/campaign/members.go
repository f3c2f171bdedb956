package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zkgroup/kafka/internal/tcpproxy"
)

// member is one slot of the group: a child process (restarted as a new
// incarnation after a kill) behind proxies of its own to every ZooKeeper
// server, which a client cut cuts.
type member struct {
	slot        int
	proxies     []*tcpproxy.Proxy
	incarnation int
	cmd         *exec.Cmd
	exited      chan struct{}
}

// fleet starts and stops the members of one run.
type fleet struct {
	o      *options
	dir    string
	group  string
	topic  string
	self   string
	mu     sync.Mutex
	byslot map[int]*member
}

func newFleet(o *options, dir, group, topic string) (*fleet, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return &fleet{o: o, dir: dir, group: group, topic: topic, self: self, byslot: make(map[int]*member)}, nil
}

// start starts slot's next incarnation, with proxies made at its first.
func (f *fleet) start(slot int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.byslot[slot]
	if m == nil {
		m = &member{slot: slot}
		for _, addr := range f.o.zk {
			p, err := tcpproxy.New(addr)
			if err != nil {
				return err
			}
			m.proxies = append(m.proxies, p)
		}
		f.byslot[slot] = m
	}
	if m.cmd != nil {
		return fmt.Errorf("member %d already runs", slot)
	}
	m.incarnation++
	var addrs []string
	for _, p := range m.proxies {
		addrs = append(addrs, p.Addr())
	}
	reader := fmt.Sprintf("m%d.%d", slot, m.incarnation)
	logf, err := os.Create(filepath.Join(f.dir, reader+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(f.self, childMode, "-group", f.group, "-topic", f.topic, "-zk", strings.Join(addrs, ","),
		"-reader", reader, "-out", filepath.Join(f.dir, reader+".jsonl"), "-session", f.o.session.String(),
		"-messages-buffer", fmt.Sprint(f.o.buffer))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	m.cmd, m.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}(m.exited)
	return nil
}

// running returns slot's member if its process runs.
func (f *fleet) running(slot int) *member {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.byslot[slot]; m != nil && m.cmd != nil {
		return m
	}
	return nil
}

// signal sends sig to slot's process.
func (f *fleet) signal(slot int, sig syscall.Signal) error {
	m := f.running(slot)
	if m == nil {
		return fmt.Errorf("member %d does not run", slot)
	}
	return m.cmd.Process.Signal(sig)
}

// stop ends slot's process: SIGTERM (a clean close) and, past grace,
// SIGKILL; kill sends SIGKILL at once. It waits for the process to exit.
func (f *fleet) stop(slot int, kill bool, grace time.Duration) error {
	m := f.running(slot)
	if m == nil {
		return fmt.Errorf("member %d does not run", slot)
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = m.cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot close
	_ = m.cmd.Process.Signal(sig)
	select {
	case <-m.exited:
	case <-time.After(grace):
		_ = m.cmd.Process.Kill()
		<-m.exited
	}
	f.mu.Lock()
	m.cmd = nil
	f.mu.Unlock()
	return nil
}

// cut cuts (or restores) slot's links to ZooKeeper.
func (f *fleet) cut(slot int, cut bool) error {
	f.mu.Lock()
	m := f.byslot[slot]
	f.mu.Unlock()
	if m == nil {
		return fmt.Errorf("member %d never ran", slot)
	}
	for _, p := range m.proxies {
		if cut {
			p.Cut()
		} else {
			p.Restore()
		}
	}
	return nil
}

// slots returns the slots whose process runs.
func (f *fleet) slots() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for s, m := range f.byslot {
		if m.cmd != nil {
			out = append(out, s)
		}
	}
	return out
}

// close stops every member cleanly (within grace each, all at once) and
// closes the proxies.
func (f *fleet) close(grace time.Duration) {
	var wg sync.WaitGroup
	for _, s := range f.slots() {
		wg.Add(1)
		go func() { defer wg.Done(); _ = f.stop(s, false, grace) }()
	}
	wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.byslot {
		for _, p := range m.proxies {
			_ = p.Close()
		}
	}
}
