package kazoo

import (
	"errors"
	"fmt"
	"strings"
)

// MaxTopicNameLength is the longest topic name Kafka accepts (249: a
// partition's log directory, "<topic>-<partition>", must fit in 255 bytes).
const MaxTopicNameLength = 249

// ErrInvalidTopicName is wrapped by every error about a topic name that
// Kafka would refuse. The error names the offending name.
var ErrInvalidTopicName = errors.New("kazoo: invalid topic name")

// ValidateTopicName reports whether Kafka accepts name as a topic name: it is
// not empty, at most MaxTopicNameLength characters of [a-zA-Z0-9._-], and
// neither "." nor "..". The error wraps ErrInvalidTopicName and quotes name.
//
// Every method of this package that takes a topic name checks it this way
// before building a znode path from it, so a name like "../ids" never
// reaches ZooKeeper.
func ValidateTopicName(name string) error {
	bad := func(reason string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidTopicName, name, reason)
	}
	switch {
	case name == "":
		return bad("it is empty")
	case name == "." || name == "..":
		return bad(`"." and ".." are not allowed`)
	case len(name) > MaxTopicNameLength:
		return bad(fmt.Sprintf("it is %d characters long, the maximum is %d", len(name), MaxTopicNameLength))
	}
	for i := 0; i < len(name); i++ {
		if !legalTopicChar(name[i]) {
			return bad(fmt.Sprintf("character %q at offset %d is not one of [a-zA-Z0-9._-]", name[i], i))
		}
	}
	return nil
}

func legalTopicChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

// topicNamesCollide reports whether Kafka considers two different topic
// names to collide: they are equal once '.' is replaced by '_' (their
// metric names would be the same).
func topicNamesCollide(a, b string) bool {
	return a != b && strings.ReplaceAll(a, ".", "_") == strings.ReplaceAll(b, ".", "_")
}
