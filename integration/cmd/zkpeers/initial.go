package main

import (
	"encoding/binary"
	"fmt"
	"io"
)

// ZooKeeper's election protocol opens every connection with an initial
// message: protocol version (int64), the sender's server id (int64), then
// the length (int32) and text of the sender's own election address(es),
// "host:port" joined by "|". A receiver with a higher id than the sender
// drops the connection and connects back to that advertised address, which
// is the sender's real port: the link would run beside the proxy, and a cut
// would not touch it. rewriteInitial replaces the advertised address with
// the proxy of the reverse link, so the connection back is proxied too.
const (
	electionProtocolV1 = -65536
	electionProtocolV2 = -65535
	maxInitialAddress  = 64 << 10
)

// rewriteInitial copies the initial message from src to dst, advertising
// addr instead of the sender's own address. It returns the sender's id and
// the address it advertised. A stream that does not start with a known
// protocol version (an old server sends only its id) is copied as is
// (the id it returns is then -1).
func rewriteInitial(src io.Reader, dst io.Writer, addr string) (sid int64, was string, err error) {
	var head [8]byte
	if _, err := io.ReadFull(src, head[:]); err != nil {
		return -1, "", fmt.Errorf("read protocol version: %w", err)
	}
	version := int64(binary.BigEndian.Uint64(head[:]))
	if version != electionProtocolV1 && version != electionProtocolV2 {
		_, err := dst.Write(head[:])
		return -1, "", err
	}
	var rest [12]byte
	if _, err := io.ReadFull(src, rest[:]); err != nil {
		return -1, "", fmt.Errorf("read server id: %w", err)
	}
	sid = int64(binary.BigEndian.Uint64(rest[:8]))
	n := int32(binary.BigEndian.Uint32(rest[8:]))
	if n <= 0 || n > maxInitialAddress {
		return sid, "", fmt.Errorf("server %d advertises an address of %d bytes", sid, n)
	}
	old := make([]byte, n)
	if _, err := io.ReadFull(src, old); err != nil {
		return sid, "", fmt.Errorf("read address of server %d: %w", sid, err)
	}
	out := make([]byte, 0, 20+len(addr))
	out = append(out, head[:]...)
	out = append(out, rest[:8]...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(addr)))
	out = append(out, addr...)
	_, err = dst.Write(out)
	return sid, string(old), err
}
