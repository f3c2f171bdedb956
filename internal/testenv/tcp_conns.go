package testenv

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// EstablishedConns counts this process's established TCP connections by
// remote address ("ip:port"). Linux only: it reads /proc/self/net/tcp and
// tcp6, which list the whole network namespace's sockets, and keeps those
// whose inode is one of this process's file descriptors (/proc/self/fd).
func EstablishedConns() (map[string]int, error) {
	ours, err := socketInodes()
	if err != nil {
		return nil, err
	}
	counts := make(map[string]int)
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		data, err := os.ReadFile(table)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for i, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if i == 0 || len(f) < 10 || f[3] != "01" || !ours[f[9]] { // 01: ESTABLISHED
				continue
			}
			remote, err := procAddr(f[2])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", table, err)
			}
			counts[remote]++
		}
	}
	return counts, nil
}

// socketInodes returns the inodes of this process's sockets.
func socketInodes() (map[string]bool, error) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	inodes := make(map[string]bool, len(fds))
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil {
			continue // closed since the listing
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	return inodes, nil
}

// procAddr turns /proc/net/tcp's "0100007F:2384" (the address as 32-bit
// words in host order, little-endian here; the port big-endian) into
// "127.0.0.1:9092".
func procAddr(s string) (string, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(hexIP)
	if !ok || err != nil || (len(raw) != 4 && len(raw) != 16) {
		return "", fmt.Errorf("address %q", s)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return "", fmt.Errorf("address %q: %w", s, err)
	}
	ip := make(net.IP, len(raw))
	for w := 0; w < len(raw); w += 4 {
		ip[w], ip[w+1], ip[w+2], ip[w+3] = raw[w+3], raw[w+2], raw[w+1], raw[w]
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(int(port))), nil
}
