package integration

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// Helpers of the hand-over soak (soak_handover_integration_test.go): a link
// that delays ZooKeeper traffic, an observer of every partition's owner
// node, and a ledger small enough for hundreds of thousands of deliveries.

// delayLink forwards every connection accepted on 127.0.0.1 to target and
// delays each byte by d in each direction (order kept), as a network with a
// round trip of 2d would. Closing either side of a forwarded connection
// closes the other.
type delayLink struct {
	ln     net.Listener
	target string
	d      time.Duration

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func newDelayLink(target string, d time.Duration) (*delayLink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &delayLink{ln: ln, target: target, d: d, conns: make(map[net.Conn]struct{})}
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

func (l *delayLink) Addr() string { return l.ln.Addr().String() }

// Close stops listening, drops every connection and waits for the link's
// goroutines.
func (l *delayLink) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	conns := make([]net.Conn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	clear(l.conns)
	l.mu.Unlock()
	err := l.ln.Close()
	for _, c := range conns {
		_ = c.Close()
	}
	l.wg.Wait()
	return err
}

func (l *delayLink) acceptLoop() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		} else if err != nil {
			continue
		}
		l.wg.Add(1)
		go l.forward(c)
	}
}

func (l *delayLink) forward(client net.Conn) {
	defer l.wg.Done()
	server, err := net.DialTimeout("tcp", l.target, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	l.conns[client], l.conns[server] = struct{}{}, struct{}{}
	l.mu.Unlock()
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			_ = client.Close()
			_ = server.Close()
			l.mu.Lock()
			delete(l.conns, client)
			delete(l.conns, server)
			l.mu.Unlock()
		})
	}
	l.wg.Add(2)
	go l.pipe(client, server, closeBoth)
	go l.pipe(server, client, closeBoth)
}

// pipe copies src to dst, each chunk d after it was read.
func (l *delayLink) pipe(src, dst net.Conn, closeBoth func()) {
	defer l.wg.Done()
	type chunk struct {
		data []byte
		at   time.Time
	}
	ch := make(chan chunk, 1024)
	l.wg.Add(1)
	go func() { // the writer
		defer l.wg.Done()
		defer closeBoth()
		for c := range ch {
			if wait := time.Until(c.at.Add(l.d)); wait > 0 {
				time.Sleep(wait)
			}
			if _, err := dst.Write(c.data); err != nil {
				for range ch { // let the reader end
				}
				return
			}
		}
	}()
	defer close(ch)
	for {
		buf := make([]byte, 32*1024)
		n, err := src.Read(buf)
		if n > 0 {
			ch <- chunk{data: buf[:n], at: time.Now()}
		}
		if err != nil {
			return
		}
	}
}

// ownershipGap is a time in which one partition was not owned as it should
// be: for an unowned interval, it had no owner node; for a hand-over gap,
// its owner node was missing or held another instance than the one the
// group's assignment of the registered instances gives it to.
type ownershipGap struct {
	partition int32
	from, to  time.Time
	cycle     int    // the soak cycle it began in (0: before the first)
	detail    string // who held it when it began, and who should
	open      bool   // still going on when it was read
}

func (g ownershipGap) length() time.Duration { return g.to.Sub(g.from) }

// partitionView is what the observer knows of one partition.
type partitionView struct {
	owner     string // "" when there is no owner node
	lastOwner string // the last owner seen ("" never)

	unownedSince time.Time // zero while owned
	unownedCycle int
	unownedAfter string // the owner before

	gapSince time.Time // zero while owned by its assignee
	gapCycle int
	gapFrom  string // the owner when the gap began
	gapTo    string // the assignee when the gap began
}

// handoverObserver follows, from its own ZooKeeper clients, the group's
// registrations, every partition's owner node and every partition's offset
// node, all through watches (an exists watch for the owner nodes, so that
// a creation is seen as soon as a deletion). It records every unowned
// interval, every hand-over gap and every hand-over (the owner changing
// from one instance to another, whatever came between), and calls the
// armed triggers.
type handoverObserver struct {
	t          testing.TB
	kz         *kazoo.Kazoo
	cg         *kazoo.Consumergroup
	zc         *zk.Conn // for exists watches, which kazoo does not offer
	group      string
	topic      string
	partitions int32
	infos      []consumergroup.PartitionInfo
	stop       chan struct{}
	wg         sync.WaitGroup
	closeOnce  sync.Once

	mu        sync.Mutex
	ids       []string         // registered, sorted
	assign    map[int32]string // partition -> assignee of ids
	parts     []partitionView
	cycle     int
	unowned   []ownershipGap
	gaps      []ownershipGap
	handovers int
	readErrs  int
	lastErr   error

	// Triggers, armed for one cycle and fired at most once each.
	armedCommit bool                                      // on a commit of a moving partition
	armedClaim  bool                                      // on a claim by a partition's assignee
	onCommit    func(p int32, offset int64, owner string) // called without mu, in the watch's goroutine
	onClaim     func(p int32, owner string)               // called without mu, in the watch's goroutine
	claimable   func(owner string) bool                   // whether the claim trigger may fire for owner; called with mu held
}

func newHandoverObserver(t testing.TB, group, topic string, partitions int32) *handoverObserver {
	t.Helper()
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatalf("observer: %v", err)
	}
	zc, _, err := zk.Connect(testenv.ZKServers(), 6*time.Second, zk.WithLogInfo(false), zk.WithLogger(silentLogger{}))
	if err != nil {
		_ = kz.Close()
		t.Fatalf("observer: %v", err)
	}
	o := &handoverObserver{
		t: t, kz: kz, cg: kz.Consumergroup(group), zc: zc, group: group, topic: topic, partitions: partitions,
		stop: make(chan struct{}), assign: map[int32]string{}, parts: make([]partitionView, partitions),
	}
	t.Cleanup(o.close)
	leaders := map[int32]int32{}
	if parts, err := kz.Topic(topic).Partitions(); err == nil {
		for _, p := range parts {
			if l, err := p.Leader(); err == nil {
				leaders[p.ID] = l
			}
		}
	}
	for p := int32(0); p < partitions; p++ {
		leader, ok := leaders[p]
		if !ok {
			t.Fatalf("observer: no leader known for %s/%d", topic, p)
		}
		o.infos = append(o.infos, consumergroup.PartitionInfo{ID: p, Leader: leader})
	}
	o.wg.Add(1)
	go o.followInstances()
	for p := int32(0); p < partitions; p++ {
		o.wg.Add(2)
		go o.followOwner(p)
		go o.followOffset(p)
	}
	return o
}

func (o *handoverObserver) close() {
	o.closeOnce.Do(func() {
		close(o.stop)
		_ = o.kz.Close()
		o.zc.Close()
		o.wg.Wait()
	})
}

func (o *handoverObserver) stopping() bool {
	select {
	case <-o.stop:
		return true
	default:
		return false
	}
}

func (o *handoverObserver) readError(err error) {
	o.mu.Lock()
	o.readErrs++
	o.lastErr = err
	o.mu.Unlock()
	select {
	case <-o.stop:
	case <-time.After(10 * time.Millisecond):
	}
}

func (o *handoverObserver) followInstances() {
	defer o.wg.Done()
	for !o.stopping() {
		list, ch, err := o.cg.WatchInstances()
		if err != nil {
			o.readError(err)
			continue
		}
		ids := make([]string, 0, len(list))
		for _, i := range list {
			ids = append(ids, i.ID)
		}
		slices.Sort(ids)
		o.setIDs(ids, time.Now())
		select {
		case <-ch:
		case <-o.stop:
			return
		}
	}
}

func (o *handoverObserver) followOwner(p int32) {
	defer o.wg.Done()
	node := fmt.Sprintf("/consumers/%s/owners/%s/%d", o.group, o.topic, p)
	for !o.stopping() {
		// The exists watch fires on the node's creation, change and
		// deletion; the value read after setting it is at least as new.
		ok, _, ch, err := o.zc.ExistsW(node)
		owner := ""
		if err == nil && ok {
			var data []byte
			data, _, err = o.zc.Get(node)
			if errors.Is(err, zk.ErrNoNode) {
				err = nil // deleted meanwhile: the watch has fired
			}
			owner = string(data)
		}
		if err != nil {
			o.readError(err)
			continue
		}
		o.setOwner(p, owner, time.Now())
		select {
		case <-ch:
		case <-o.stop:
			return
		}
	}
}

func (o *handoverObserver) followOffset(p int32) {
	defer o.wg.Done()
	prev := int32(-1)
	for !o.stopping() {
		offset, version, ch, err := o.cg.WatchOffset(o.topic, p)
		if err != nil {
			o.readError(err)
			continue
		}
		if version >= 0 && version != prev {
			o.committed(p, offset)
		}
		prev = version
		if ch == nil {
			return
		}
		select {
		case <-ch:
		case <-o.stop:
			return
		}
	}
}

// setTriggers sets what the armed triggers call.
func (o *handoverObserver) setTriggers(onCommit func(p int32, offset int64, owner string),
	onClaim func(p int32, owner string), claimable func(owner string) bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.onCommit, o.onClaim, o.claimable = onCommit, onClaim, claimable
}

// arm sets the triggers for the next cycle (and disarms those not set).
func (o *handoverObserver) arm(cycle int, onCommit, onClaim bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cycle = cycle
	o.armedCommit, o.armedClaim = onCommit, onClaim
}

func (o *handoverObserver) disarm() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.armedCommit, o.armedClaim = false, false
}

// committed: the offset node of p was written (by its owner, or a reset).
func (o *handoverObserver) committed(p int32, offset int64) {
	o.mu.Lock()
	v := o.parts[p]
	fire := o.armedCommit && o.onCommit != nil && v.owner != "" && v.owner != o.assign[p]
	onCommit := o.onCommit
	if fire {
		o.armedCommit = false
	}
	o.mu.Unlock()
	if fire {
		// A commit of a partition whose owner is no longer its assignee:
		// most likely the old owner's final commit, its release next.
		onCommit(p, offset, v.owner)
	}
}

func (o *handoverObserver) setIDs(ids []string, at time.Time) {
	assign := map[int32]string{}
	if len(ids) > 0 {
		byID, err := consumergroup.AssignTopic(consumergroup.DefaultAssignmentStrategy, o.topic, ids, o.infos)
		if err != nil {
			o.readError(fmt.Errorf("assign: %w", err))
			return
		}
		for id, ps := range byID {
			for _, p := range ps {
				assign[p.ID] = id
			}
		}
	}
	o.mu.Lock()
	o.ids, o.assign = ids, assign
	for p := range o.parts {
		o.judge(int32(p), at)
	}
	o.mu.Unlock()
}

func (o *handoverObserver) setOwner(p int32, owner string, at time.Time) {
	o.mu.Lock()
	v := &o.parts[p]
	var fire func()
	if owner != v.owner && owner != "" && owner == o.assign[p] && o.armedClaim && o.onClaim != nil &&
		(o.claimable == nil || o.claimable(owner)) {
		// A claim by the partition's assignee, just applied: its reply is
		// still on its way to the member.
		o.armedClaim = false
		onClaim := o.onClaim
		fire = func() { onClaim(p, owner) }
	}
	if owner != v.owner {
		switch {
		case owner == "":
			v.unownedSince, v.unownedCycle, v.unownedAfter = at, o.cycle, v.owner
		case v.owner == "" && !v.unownedSince.IsZero():
			o.unowned = append(o.unowned, ownershipGap{partition: p, from: v.unownedSince, to: at, cycle: v.unownedCycle,
				detail: fmt.Sprintf("owner %s -> %s", short(v.unownedAfter), short(owner))})
			v.unownedSince = time.Time{}
		}
		if owner != "" {
			if v.lastOwner != "" && v.lastOwner != owner {
				o.handovers++
			}
			v.lastOwner = owner
		}
		v.owner = owner
	}
	o.judge(p, at)
	o.mu.Unlock()
	if fire != nil {
		fire()
	}
}

// judge opens or closes p's hand-over gap at at. Called with mu held.
func (o *handoverObserver) judge(p int32, at time.Time) {
	v := &o.parts[p]
	assignee := o.assign[p]
	if v.owner != assignee {
		if v.gapSince.IsZero() {
			v.gapSince, v.gapCycle, v.gapFrom, v.gapTo = at, o.cycle, v.owner, assignee
		}
	} else if !v.gapSince.IsZero() {
		o.gaps = append(o.gaps, ownershipGap{partition: p, from: v.gapSince, to: at, cycle: v.gapCycle,
			detail: fmt.Sprintf("held by %s, assigned to %s; then owned by %s", short(v.gapFrom), short(v.gapTo), short(assignee))})
		v.gapSince = time.Time{}
	}
}

// converged reports whether the registered instances are exactly live and
// every partition is owned by its assignee; otherwise it says why.
func (o *handoverObserver) converged(live []string) (bool, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !slices.Equal(o.ids, sortedCopy(live)) {
		return false, fmt.Sprintf("registered %v, live %v", shortAll(o.ids), shortAll(sortedCopy(live)))
	}
	var bad []string
	for p, v := range o.parts {
		if a := o.assign[int32(p)]; v.owner != a || a == "" {
			bad = append(bad, fmt.Sprintf("%d held by %s, assigned to %s (since %v ago)",
				p, short(v.owner), short(a), time.Since(v.gapSince).Round(time.Millisecond)))
		}
	}
	if len(bad) > 0 {
		return false, fmt.Sprint(bad)
	}
	return true, ""
}

// results returns every interval recorded, those still open ending now.
func (o *handoverObserver) results() (unowned, gaps []ownershipGap, handovers, readErrs int, lastErr error) {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	unowned = append([]ownershipGap(nil), o.unowned...)
	gaps = append([]ownershipGap(nil), o.gaps...)
	for p, v := range o.parts {
		if !v.unownedSince.IsZero() {
			unowned = append(unowned, ownershipGap{partition: int32(p), from: v.unownedSince, to: now, cycle: v.unownedCycle,
				detail: fmt.Sprintf("owner %s -> nobody yet", short(v.unownedAfter)), open: true})
		}
		if !v.gapSince.IsZero() {
			gaps = append(gaps, ownershipGap{partition: int32(p), from: v.gapSince, to: now, cycle: v.gapCycle,
				detail: fmt.Sprintf("held by %s, assigned to %s; now held by %s, assigned to %s",
					short(v.gapFrom), short(v.gapTo), short(v.owner), short(o.assign[int32(p)])), open: true})
		}
	}
	return unowned, gaps, o.handovers, o.readErrs, o.lastErr
}

// handoverCount is how many hand-overs were seen so far.
func (o *handoverObserver) handoverCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.handovers
}

// owners returns the owner of every partition as last seen ("" none).
func (o *handoverObserver) owners() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, len(o.parts))
	for p, v := range o.parts {
		out[p] = v.owner
	}
	return out
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// short abbreviates an instance id (host:uuid) to the uuid's first 8
// characters, enough to tell the soak's members apart.
func short(id string) string {
	if id == "" {
		return "nobody"
	}
	if i := len(id) - 36; i > 0 && id[i-1] == ':' {
		return id[i : i+8]
	}
	return id
}

func shortAll(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = short(id)
	}
	return out
}

// soakLedger counts deliveries per partition and offset: a byte per
// offset, so a soak that redelivers a topic after every reset stays small.
type soakLedger struct {
	mu         sync.Mutex
	counts     map[int32][]uint8
	deliveries int64
}

func newSoakLedger() *soakLedger { return &soakLedger{counts: map[int32][]uint8{}} }

func (l *soakLedger) add(p int32, offset int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deliveries++
	c := l.counts[p]
	if int64(len(c)) <= offset {
		c = append(c, make([]uint8, offset+1-int64(len(c))+1024)...)
		l.counts[p] = c
	}
	if c[offset] < 255 {
		c[offset]++
	}
}

// missing counts the produced offsets (counts: how many went to each
// partition, from offset 0) never delivered, and returns the first few.
func (l *soakLedger) missing(counts map[int32]int64) (int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	var first []string
	for p, want := range counts {
		c := l.counts[p]
		for o := int64(0); o < want; o++ {
			if o >= int64(len(c)) || c[o] == 0 {
				n++
				if len(first) < 10 {
					first = append(first, fmt.Sprintf("%d/%d", p, o))
				}
			}
		}
	}
	return n, first
}

// figures returns the deliveries, the distinct offsets delivered and the
// deliveries of an offset delivered before.
func (l *soakLedger) figures() (deliveries, distinct, duplicates int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.counts {
		for _, n := range c {
			if n > 0 {
				distinct++
			}
		}
	}
	return l.deliveries, distinct, l.deliveries - distinct
}
