package kazoo

import (
	"encoding/binary"
	"net"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// negotiatedTimeout remembers the session timeout the server granted. The
// server bounds the requested timeout to its [minSessionTimeout,
// maxSessionTimeout] and says so in its connect response, but go-zookeeper
// keeps the answer to itself; so every connection it dials is wrapped to
// read the timeout out of the first frame the server sends on it.
type negotiatedTimeout struct {
	ms atomic.Int64 // 0 until a server granted a session
}

// get returns the last timeout a server granted, or 0 if none yet.
func (n *negotiatedTimeout) get() time.Duration {
	return time.Duration(n.ms.Load()) * time.Millisecond
}

// wrap returns a dialer that dials with d and watches the connect response
// of each new connection.
func (n *negotiatedTimeout) wrap(d zk.Dialer) zk.Dialer {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := d(network, address, timeout)
		if err != nil {
			return nil, err
		}
		return &connectSniffer{Conn: c, into: n}, nil
	}
}

// The connect response starts with its length, the protocol version and the
// timeout in milliseconds, each a big-endian int32; the session id follows.
const connectHeaderLen = 12

// connectSniffer passes reads through and decodes the session timeout from
// the first connectHeaderLen bytes, however the reads split them. Only the
// client's single reader goroutine reads a connection, so it needs no lock;
// once the header is seen a read costs one comparison more.
type connectSniffer struct {
	net.Conn
	into *negotiatedTimeout
	head [connectHeaderLen]byte
	seen int // bytes of head filled; connectHeaderLen once decoded
}

func (c *connectSniffer) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.seen < connectHeaderLen && n > 0 {
		c.seen += copy(c.head[c.seen:], p[:n])
		if c.seen == connectHeaderLen {
			// A server refusing an expired session answers with timeout 0:
			// keep what the last session was granted.
			if ms := int32(binary.BigEndian.Uint32(c.head[8:12])); ms > 0 {
				c.into.ms.Store(int64(ms))
			}
		}
	}
	return n, err
}

// SessionTimeout returns the session timeout the server granted at the last
// connect, or Config.Timeout until a server has granted one. The server
// bounds the requested timeout to its [minSessionTimeout, maxSessionTimeout]
// (by default 2 and 20 ticks), so the session may expire well before
// Config.Timeout; whatever measures time against the expiry must use this
// value. It may change when the client reconnects to another server with
// different bounds, and is up to date by the time Session reports the
// (re)connection.
func (kz *Kazoo) SessionTimeout() time.Duration {
	if t := kz.negotiated.get(); t > 0 {
		return t
	}
	return kz.conf.Timeout
}
