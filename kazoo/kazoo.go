package kazoo

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Kazoo reads and writes the Kafka metadata and consumer-group state that
// live in ZooKeeper. It is safe for concurrent use.
type Kazoo struct {
	conn    *zk.Conn
	conf    *Config
	logger  Logger
	acl     []zk.ACL
	session *sessionTracker
	// negotiated is the session timeout the server granted (SessionTimeout).
	negotiated negotiatedTimeout
	// dialErrs keeps the last failure to connect, for NewKazoo's error.
	dialErrs dialErrors
	// dialCtx ends at Close, aborting a dial or TLS handshake under way: the
	// client's Close would otherwise wait for it. WatchClaim's goroutine
	// ends with it too.
	dialCtx    context.Context
	dialCancel context.CancelFunc
	// registered holds the registration nodes this client registered and
	// has not deregistered (a key per node; see registrationFence).
	registered sync.Map

	closeOnce sync.Once
}

// NewKazoo connects to the ZooKeeper servers ("host:port") and waits, up to
// conf.ConnectTimeout, for a session. A nil conf means NewConfig(). It fails
// if the config is invalid, no session could be established in time (the
// error then wraps the last *DialError: a refused connection, a failed TLS
// handshake, a server that closed the connection), a credential is
// refused, or conf.Chroot does not exist.
func NewKazoo(servers []string, conf *Config) (*Kazoo, error) {
	if conf == nil {
		conf = NewConfig()
	}
	if err := conf.Validate(); err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, errors.New("kazoo: no ZooKeeper servers given")
	}
	logger := conf.Logger
	if logger == nil {
		logger = discardLogger{}
	}
	kz := &Kazoo{conf: conf, logger: logger, acl: toZKACL(conf.ACL), session: newSessionTracker(time.Now)}
	kz.dialCtx, kz.dialCancel = context.WithCancel(context.Background())

	// The callback may fire before Connect returns; it must see kz.conn.
	var ready sync.Mutex
	ready.Lock()
	kz.session.idOf = func() int64 {
		ready.Lock()
		defer ready.Unlock()
		return kz.conn.SessionID()
	}
	conn, _, err := zk.Connect(servers, conf.Timeout,
		zk.WithEventCallback(kz.session.onEvent),
		zk.WithDialer(kz.negotiated.wrap(kz.dialer())),
		zk.WithLogger(logger),
		zk.WithLogInfo(false),
	)
	if err != nil {
		ready.Unlock()
		kz.dialCancel()
		return nil, fmt.Errorf("kazoo: connect to %v: %w", servers, err)
	}
	kz.conn = conn
	ready.Unlock()

	if err := kz.waitForSession(conf.ConnectTimeout); err != nil {
		kz.Close()
		if last := kz.dialErrs.get(); last != nil {
			return nil, fmt.Errorf("kazoo: %v: %w; last error: %w", servers, err, last)
		}
		return nil, fmt.Errorf("kazoo: %v: %w", servers, err)
	}
	for _, a := range conf.Auth {
		if err := conn.AddAuth(a.Scheme, a.Credentials); err != nil {
			kz.Close()
			return nil, fmt.Errorf("kazoo: Config.Auth scheme %q: %w", a.Scheme, err)
		}
	}
	if conf.Chroot != "" {
		ok, err := kz.exists(conf.Chroot)
		if err == nil && !ok {
			err = ErrChrootNotFound
		}
		if err != nil {
			kz.Close()
			return nil, znodeErr("check chroot", conf.Chroot, err)
		}
	}
	return kz, nil
}

// NewKazooFromConnectionString is NewKazoo for a connection string such as
// "zk1:2181,zk2:2181/kafka"; the chroot in the string replaces conf.Chroot.
// conf is not modified.
func NewKazooFromConnectionString(connectionString string, conf *Config) (*Kazoo, error) {
	c := NewConfig()
	if conf != nil {
		cp := *conf
		c = &cp
	}
	nodes, chroot := ParseConnectionString(connectionString)
	c.Chroot = chroot
	return NewKazoo(nodes, c)
}

func (kz *Kazoo) waitForSession(timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s, changed := kz.Session()
		if s.Status == SessionConnected {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("no ZooKeeper session within %s (Config.ConnectTimeout)", timeout)
		}
	}
}

// Close closes the connection. The session ends at once, so every ephemeral
// node of it (registrations, claims) is deleted by the server.
func (kz *Kazoo) Close() error {
	kz.closeOnce.Do(func() {
		kz.session.close()
		kz.dialCancel()
		kz.conn.Close()
	})
	return nil
}

// Chroot returns the chroot every path is relative to ("" for the root).
func (kz *Kazoo) Chroot() string { return kz.conf.Chroot }

// logf writes a note to Config.Logger. Operations that return one of
// kazoo-go's sentinel errors return it bare, so callers can compare with
// ==; the details (which znode, which session) go here.
func (kz *Kazoo) logf(format string, args ...any) {
	kz.logger.Printf("kazoo: "+format, args...)
}

// ---- znode helpers; every error names the path ----

func (kz *Kazoo) exists(node string) (bool, error) {
	ok, _, err := kz.conn.Exists(node)
	return ok, znodeErr("exists", node, err)
}

func (kz *Kazoo) get(node string) ([]byte, *zk.Stat, error) {
	data, stat, err := kz.conn.Get(node)
	return data, stat, znodeErr("get", node, err)
}

func (kz *Kazoo) children(node string) ([]string, error) {
	c, _, err := kz.conn.Children(node)
	return c, znodeErr("children", node, err)
}

// mkdirRecursive creates node and its missing parents as persistent, empty
// znodes. Nodes created concurrently by someone else are fine.
func (kz *Kazoo) mkdirRecursive(node string) error {
	if node == "/" || node == "" || node == "." {
		return nil
	}
	ok, err := kz.exists(node)
	if err != nil || ok {
		return err
	}
	if err := kz.mkdirRecursive(path.Dir(node)); err != nil {
		return err
	}
	_, err = kz.conn.Create(node, nil, 0, kz.acl)
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return znodeErr("create", node, err)
}

// create stores value at a new node, creating its parents.
func (kz *Kazoo) create(node string, value []byte, ephemeral bool) error {
	if err := kz.mkdirRecursive(path.Dir(node)); err != nil {
		return err
	}
	var flags int32
	if ephemeral {
		flags = zk.FlagEphemeral
	}
	_, err := kz.conn.Create(node, value, flags, kz.acl)
	return znodeErr("create", node, err)
}

// createOrUpdate sets node to value, creating it (and its parents) if needed.
func (kz *Kazoo) createOrUpdate(node string, value []byte, ephemeral bool) error {
	_, err := kz.conn.Set(node, value, -1)
	if errors.Is(err, zk.ErrNoNode) {
		err = kz.create(node, value, ephemeral)
		if errors.Is(err, zk.ErrNodeExists) {
			_, err = kz.conn.Set(node, value, -1)
		}
	}
	if err != nil {
		var ze *ZnodeError
		if !errors.As(err, &ze) {
			err = znodeErr("set", node, err)
		}
	}
	return err
}

// deleteRecursive deletes node and everything below it; a missing node is
// not an error. A child created meanwhile (a commit racing a reset, say)
// makes it list the children again, a few times.
func (kz *Kazoo) deleteRecursive(node string) error {
	var err error
	for range 5 {
		var children []string
		children, _, err = kz.conn.Children(node)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		} else if err != nil {
			return znodeErr("children", node, err)
		}
		for _, child := range children {
			if err := kz.deleteRecursive(path.Join(node, child)); err != nil {
				return err
			}
		}
		err = kz.conn.Delete(node, -1)
		if err == nil || errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if !errors.Is(err, zk.ErrNotEmpty) {
			break
		}
	}
	return znodeErr("delete", node, err)
}
