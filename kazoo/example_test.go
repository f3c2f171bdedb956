package kazoo_test

import (
	"fmt"

	"github.com/zkgroup/kafka/kazoo"
)

// A connection string lists servers, then an optional chroot: the path
// under which the group's nodes live. Empty entries and a trailing "/" are
// dropped, so an empty string gives no server at all, which NewKazoo
// refuses instead of dialling localhost.
func ExampleParseConnectionString() {
	for _, s := range []string{
		"zk1:2181,zk2:2181,zk3:2181/kafka",
		"zk1:2181/",
		" zk1:2181 , ,zk2:2181",
		"",
	} {
		servers, chroot := kazoo.ParseConnectionString(s)
		fmt.Printf("%q -> servers %q, chroot %q\n", s, servers, chroot)
	}
	servers, chroot := kazoo.ParseConnectionString("zk1:2181,zk2:2181/kafka")
	fmt.Println(kazoo.BuildConnectionStringWithChroot(servers, chroot))
	// Output:
	// "zk1:2181,zk2:2181,zk3:2181/kafka" -> servers ["zk1:2181" "zk2:2181" "zk3:2181"], chroot "/kafka"
	// "zk1:2181/" -> servers ["zk1:2181"], chroot ""
	// " zk1:2181 , ,zk2:2181" -> servers ["zk1:2181" "zk2:2181"], chroot ""
	// "" -> servers [], chroot ""
	// zk1:2181,zk2:2181/kafka
}
