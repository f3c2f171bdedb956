package main

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/integration/campaign"
)

// recorder follows, from a ZooKeeper client of its own connected to the
// real servers (never through a member's proxy), every partition's offset,
// epoch and owner node, with watches: each state it reads goes into the
// history with the zxid that wrote it.
type recorder struct {
	conn  *zk.Conn
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	h     *campaign.History
	owned map[int32]*campaign.Ownership // the open interval of each partition
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

func startRecorder(servers []string, group, topic string, partitions int32, h *campaign.History) (*recorder, error) {
	conn, _, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		return nil, err
	}
	r := &recorder{conn: conn, stop: make(chan struct{}), h: h, owned: make(map[int32]*campaign.Ownership)}
	base := "/consumers/" + group
	for p := range partitions {
		suffix := "/" + topic + "/" + strconv.Itoa(int(p))
		r.follow(base+"/offsets"+suffix, func(data []byte, st *zk.Stat) { r.commit(p, data, st) })
		r.follow(base+"/epochs"+suffix, func(data []byte, st *zk.Stat) { r.epoch(p, st) })
		r.follow(base+"/owners"+suffix, func(data []byte, st *zk.Stat) { r.owner(p, data, st) })
	}
	return r, nil
}

// follow calls seen with every state of path it reads (nil stat: no node),
// each time it differs from the one before, until close.
func (r *recorder) follow(path string, seen func([]byte, *zk.Stat)) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		var last *zk.Stat
		first := true
		for {
			data, st, ch, err := r.conn.GetW(path)
			if err == zk.ErrNoNode {
				var exists bool
				exists, st, ch, err = r.conn.ExistsW(path)
				if err == nil && exists {
					continue // created in between: read it
				}
				st = nil
			}
			if err == nil && (first || !sameState(last, st)) {
				seen(data, st)
				last, first = st, false
			}
			var retry <-chan time.Time
			if err != nil {
				retry = time.After(50 * time.Millisecond)
			}
			select {
			case <-ch:
			case <-retry:
			case <-r.stop:
				return
			}
		}
	}()
}

func sameState(a, b *zk.Stat) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Czxid == b.Czxid && a.Mzxid == b.Mzxid
}

func (r *recorder) commit(p int32, data []byte, st *zk.Stat) {
	c := campaign.Commit{Partition: p, Value: -1, At: time.Now()}
	if st != nil {
		v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			return
		}
		c.Value, c.Version, c.Zxid = v, st.Version, st.Mzxid
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.Commits = append(r.h.Commits, c)
}

func (r *recorder) epoch(p int32, st *zk.Stat) {
	if st == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.Epochs = append(r.h.Epochs, campaign.Epoch{Partition: p, Epoch: int64(st.Version), Zxid: st.Mzxid, At: time.Now()})
}

func (r *recorder) owner(p int32, data []byte, st *zk.Stat) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if o := r.owned[p]; o != nil {
		o.To = now
		r.h.Owners = append(r.h.Owners, *o)
		delete(r.owned, p)
	}
	if st != nil {
		r.owned[p] = &campaign.Ownership{Partition: p, Owner: string(data), From: now}
	}
}

// note adds a fault or a reset to the history.
func (r *recorder) note(rec campaign.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case rec.Fault != nil:
		r.h.Faults = append(r.h.Faults, *rec.Fault)
	case rec.Reset != nil:
		r.h.Resets = append(r.h.Resets, *rec.Reset)
	}
}

// close stops following and adds the intervals still open.
func (r *recorder) close() {
	close(r.stop)
	r.conn.Close()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.owned {
		r.h.Owners = append(r.h.Owners, *o)
	}
}
