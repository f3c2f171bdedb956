package compat_test

import (
	"errors"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// cluster is a chroot of its own on the local stack's ZooKeeper, with a
// raw ZooKeeper connection (outside kazoo) that plays the other programs:
// Kafka's brokers and controller, an operator, Kafka's own consumer.
type cluster struct {
	t      *testing.T
	raw    *zk.Conn
	chroot string
}

// newCluster creates the chroot with one fake broker registration and
// removes it when t ends. Nothing of Kafka's real state is touched.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	testenv.Integration(t)
	raw, _, err := zk.Connect(testenv.ZKServers(), 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, raw: raw, chroot: "/" + testenv.UniqueName("compat")}
	t.Cleanup(func() {
		c.deleteAll(c.chroot)
		raw.Close()
	})
	c.write("", "")
	c.write("/brokers/ids/0", `{"endpoints":["PLAINTEXT://broker0:9092"],"host":"broker0","port":9092,"version":4}`)
	return c
}

// connect returns a kazoo client on the chroot, closed when t ends, built
// as kazoo-go's users build one.
func (c *cluster) connect() *kazoo.Kazoo {
	c.t.Helper()
	conf := kazoo.NewConfig()
	kz, err := kazoo.NewKazooFromConnectionString(kazoo.BuildConnectionStringWithChroot(testenv.ZKServers(), c.chroot), conf)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = kz.Close() })
	return kz
}

// write creates or sets the node at p (relative to the chroot), creating
// its parents.
func (c *cluster) write(p, data string) {
	c.t.Helper()
	full := c.chroot + p
	for dir := range parents(full) {
		if _, err := c.raw.Create(dir, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			c.t.Fatal(err)
		}
	}
	_, err := c.raw.Create(full, []byte(data), 0, zk.WorldACL(zk.PermAll))
	if errors.Is(err, zk.ErrNodeExists) {
		_, err = c.raw.Set(full, []byte(data), -1)
	}
	if err != nil {
		c.t.Fatalf("write %s: %v", full, err)
	}
}

// remove deletes the node at p (relative to the chroot).
func (c *cluster) remove(p string) {
	c.t.Helper()
	if err := c.raw.Delete(c.chroot+p, -1); err != nil {
		c.t.Fatalf("delete %s: %v", c.chroot+p, err)
	}
}

func (c *cluster) deleteAll(p string) {
	children, _, err := c.raw.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return
	} else if err != nil {
		c.t.Errorf("clean up %s: %v", p, err)
		return
	}
	for _, child := range children {
		c.deleteAll(path.Join(p, child))
	}
	if err := c.raw.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		c.t.Errorf("clean up %s: %v", p, err)
	}
}

// parents yields the ancestors of p, root first, without "/" and p.
func parents(p string) func(func(string) bool) {
	return func(yield func(string) bool) {
		parts := strings.Split(strings.Trim(p, "/"), "/")
		for i := 1; i < len(parts); i++ {
			if !yield("/" + strings.Join(parts[:i], "/")) {
				return
			}
		}
	}
}

// next waits for the one event of a watch channel, as kazoo-go's users
// read it: a zk.Event.
func next(t *testing.T, ch <-chan zk.Event) zk.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed without an event")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	panic("unreachable")
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}
