package kazoo

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// connectResponse encodes a connect response frame as a server sends it:
// length, protocol version, timeout (ms), session id, password.
func connectResponse(timeoutMs int32, session int64) []byte {
	body := make([]byte, 0, 36)
	body = binary.BigEndian.AppendUint32(body, 0) // protocol version
	body = binary.BigEndian.AppendUint32(body, uint32(timeoutMs))
	body = binary.BigEndian.AppendUint64(body, uint64(session))
	body = binary.BigEndian.AppendUint32(body, 16) // password length
	body = append(body, make([]byte, 16)...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// chunkConn is a net.Conn whose reads return the queued chunks one per
// call, however large the caller's buffer: the short reads a TCP stream may
// deliver.
type chunkConn struct {
	net.Conn // nil: only Read is used
	chunks   [][]byte
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// readFrames reads c as go-zookeeper does: the length, then the frame.
func readFrames(t *testing.T, c net.Conn) [][]byte {
	t.Helper()
	var frames [][]byte
	for {
		var l [4]byte
		if _, err := io.ReadFull(c, l[:]); errors.Is(err, io.EOF) {
			return frames
		} else if err != nil {
			t.Fatal(err)
		}
		f := make([]byte, binary.BigEndian.Uint32(l[:]))
		if _, err := io.ReadFull(c, f); err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
	}
}

func TestSnifferDecodesTimeoutFromShortReads(t *testing.T) {
	frame := connectResponse(4000, 0x1234)
	splits := map[string][][]byte{
		"whole": {frame},
		"byte by byte": func() (c [][]byte) {
			for _, b := range frame {
				c = append(c, []byte{b})
			}
			return c
		}(),
		"split inside the timeout": {frame[:3], frame[3:10], frame[10:11], frame[11:]},
	}
	for name, chunks := range splits {
		t.Run(name, func(t *testing.T) {
			var n negotiatedTimeout
			s := &connectSniffer{Conn: &chunkConn{chunks: chunks}, into: &n}
			frames := readFrames(t, s)
			if len(frames) != 1 || len(frames[0]) != len(frame)-4 {
				t.Fatalf("read %d frames, want the one frame passed through intact", len(frames))
			}
			if got := n.get(); got != 4*time.Second {
				t.Fatalf("negotiated = %v, want 4s", got)
			}
		})
	}
}

// Only the first frame of a connection is the connect response: later
// frames that happen to carry other numbers at the same offset change
// nothing.
func TestSnifferReadsOnlyTheFirstFrame(t *testing.T) {
	var n negotiatedTimeout
	later := connectResponse(9000, 1) // any later frame
	s := &connectSniffer{Conn: &chunkConn{chunks: [][]byte{connectResponse(4000, 1), later}}, into: &n}
	if frames := readFrames(t, s); len(frames) != 2 {
		t.Fatalf("read %d frames, want 2", len(frames))
	}
	if got := n.get(); got != 4*time.Second {
		t.Fatalf("negotiated = %v, want 4s from the first frame", got)
	}
}

// A server refusing an expired session answers with timeout 0: the value
// granted to the previous session stays.
func TestSnifferIgnoresRefusal(t *testing.T) {
	var n negotiatedTimeout
	n.ms.Store(6000)
	s := &connectSniffer{Conn: &chunkConn{chunks: [][]byte{connectResponse(0, 0)}}, into: &n}
	readFrames(t, s)
	if got := n.get(); got != 6*time.Second {
		t.Fatalf("negotiated = %v after a refusal, want the previous 6s", got)
	}
}

// The wrapped dialer sniffs every new connection, so a reconnect to a
// server with other bounds updates the value; a failed dial changes nothing.
func TestNegotiatedDialerPerConnection(t *testing.T) {
	var n negotiatedTimeout
	grants := []int32{60000, 1000}
	dialErr := errors.New("refused")
	dials := 0
	dial := n.wrap(func(network, address string, timeout time.Duration) (net.Conn, error) {
		if network != "tcp" || address != "zk:2181" || timeout != time.Second {
			t.Errorf("dial(%q, %q, %v): arguments not passed through", network, address, timeout)
		}
		dials++
		if dials == 2 {
			return nil, dialErr
		}
		client, server := net.Pipe()
		g := grants[0]
		grants = grants[1:]
		go func() {
			defer server.Close()
			f := connectResponse(g, 7)
			for i := range f { // one byte per write: short reads on the other end
				if _, err := server.Write(f[i : i+1]); err != nil {
					return
				}
			}
		}()
		return client, nil
	})
	for i, want := range []time.Duration{60 * time.Second, 60 * time.Second, time.Second} {
		c, err := dial("tcp", "zk:2181", time.Second)
		if i == 1 {
			if !errors.Is(err, dialErr) || c != nil {
				t.Fatalf("dial %d = %v, %v; want the dial error", i, c, err)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			readFrames(t, c)
			c.Close()
		}
		if got := n.get(); got != want {
			t.Fatalf("after dial %d negotiated = %v, want %v", i, got, want)
		}
	}
}

func TestSessionTimeoutFallsBackToConfig(t *testing.T) {
	kz := &Kazoo{conf: &Config{Timeout: 6 * time.Second}}
	if got := kz.SessionTimeout(); got != 6*time.Second {
		t.Fatalf("SessionTimeout before any connect = %v, want the configured 6s", got)
	}
	kz.negotiated.ms.Store(4000)
	if got := kz.SessionTimeout(); got != 4*time.Second {
		t.Fatalf("SessionTimeout = %v, want the negotiated 4s", got)
	}
}
