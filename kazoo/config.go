package kazoo

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// Default values of Config.
const (
	// DefaultSessionTimeout is the ZooKeeper session timeout NewConfig uses.
	// kazoo-go used 1 s, which expires sessions on any network hiccup; Kafka's
	// own ZooKeeper consumer used 6 s.
	DefaultSessionTimeout = 6 * time.Second

	// DefaultConnectTimeout is how long NewKazoo waits for the first session.
	DefaultConnectTimeout = 10 * time.Second

	// DefaultListener is the listener name whose address Brokers returns when
	// a broker registration has several endpoints.
	DefaultListener = "PLAINTEXT"
)

// Logger receives log lines: the ZooKeeper client's, and this package's
// notes on refused operations (which znode, which session). It is the
// ZooKeeper client's logger type, as in kazoo-go, so zk.DefaultLogger and
// the standard library's *log.Logger fit.
type Logger = zk.Logger

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// Config holds the settings of a Kazoo connection. Build it with NewConfig and
// change what you need; NewKazoo validates it.
type Config struct {
	// Chroot is the path the Kafka cluster is registered under, starting with
	// "/" (for example "/kafka"). Default "" (the root). NewKazoo fails with
	// ErrChrootNotFound if it does not exist.
	Chroot string

	// Timeout is the ZooKeeper session timeout: how long the client may be
	// cut off before the ensemble expires its session, deleting its ephemeral
	// nodes (registrations and claims). Default DefaultSessionTimeout (6 s).
	// The server bounds it to [2, 20] ticks unless configured otherwise;
	// Kazoo.SessionTimeout reports the timeout it granted.
	Timeout time.Duration

	// ConnectTimeout bounds how long NewKazoo waits for the first session
	// before returning an error. Default DefaultConnectTimeout (10 s).
	ConnectTimeout time.Duration

	// Listener names the listener (as in Kafka's listeners setting, e.g.
	// "PLAINTEXT", "INTERNAL") whose endpoint Brokers and BrokerList return.
	// When a broker has no endpoint of that name, its legacy host/port
	// fields are used, and failing those its first endpoint. Default
	// DefaultListener ("PLAINTEXT").
	Listener string

	// Auth lists credentials added to the session on connect, such as
	// DigestAuth("user", "password"). Default none.
	Auth []Auth

	// ACL is the access list of every znode this library creates. Default
	// nil, meaning WorldACL(PermAll), as kazoo-go does.
	ACL []ACL

	// Logger receives the ZooKeeper client's log lines and this package's
	// notes on refused operations. Default: discarded (kazoo-go printed
	// them to standard error). A nil Logger also discards.
	Logger Logger
}

// NewConfig returns a Config with the documented defaults.
func NewConfig() *Config {
	return &Config{
		Timeout:        DefaultSessionTimeout,
		ConnectTimeout: DefaultConnectTimeout,
		Listener:       DefaultListener,
		Logger:         discardLogger{},
	}
}

// Validate reports the first invalid field, naming it.
func (c *Config) Validate() error {
	switch {
	case c.Timeout <= 0:
		return fmt.Errorf("kazoo: Config.Timeout must be > 0, got %s", c.Timeout)
	case c.ConnectTimeout <= 0:
		return fmt.Errorf("kazoo: Config.ConnectTimeout must be > 0, got %s", c.ConnectTimeout)
	case c.Chroot != "" && (!strings.HasPrefix(c.Chroot, "/") || strings.HasSuffix(c.Chroot, "/")):
		return fmt.Errorf("kazoo: Config.Chroot must start with \"/\" and not end with one, got %q", c.Chroot)
	case strings.Contains(c.Chroot, "//"):
		return fmt.Errorf("kazoo: Config.Chroot must not contain \"//\", got %q", c.Chroot)
	}
	for i, a := range c.Auth {
		if a.Scheme == "" {
			return fmt.Errorf("kazoo: Config.Auth[%d].Scheme must not be empty", i)
		}
	}
	for i, a := range c.ACL {
		if a.Scheme == "" || a.Perms == 0 {
			return fmt.Errorf("kazoo: Config.ACL[%d] needs a scheme and permissions", i)
		}
	}
	return nil
}

// ErrChrootNotFound is returned by NewKazoo when Config.Chroot does not exist.
var ErrChrootNotFound = errors.New("chroot does not exist")
