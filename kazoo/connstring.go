package kazoo

import (
	"strings"
)

// ParseConnectionString parses a ZooKeeper connection string of the form
// "host1:2181,host2:2181/chroot" into its servers and chroot. The chroot is
// "" or starts with "/" (a trailing "/" is dropped). Empty server entries
// are dropped, so "" gives no servers at all, which NewKazoo refuses.
// kazoo-go returned [""] for "", which the ZooKeeper client turned into a
// connection to a server on localhost: a missing setting connected
// somewhere instead of failing.
func ParseConnectionString(zookeeper string) (nodes []string, chroot string) {
	hosts, root, found := strings.Cut(zookeeper, "/")
	if found {
		chroot = "/" + strings.TrimRight(root, "/")
		if chroot == "/" {
			chroot = ""
		}
	}
	for _, n := range strings.Split(hosts, ",") {
		if n = strings.TrimSpace(n); n != "" {
			nodes = append(nodes, n)
		}
	}
	return nodes, chroot
}

// BuildConnectionString joins servers into a connection string such as
// "zk1:2181,zk2:2181,zk3:2181".
func BuildConnectionString(nodes []string) string {
	return strings.Join(nodes, ",")
}

// BuildConnectionStringWithChroot joins servers and a chroot (starting with
// "/") into a connection string such as "zk1:2181,zk2:2181/kafka".
func BuildConnectionStringWithChroot(nodes []string, chroot string) string {
	return strings.Join(nodes, ",") + chroot
}
