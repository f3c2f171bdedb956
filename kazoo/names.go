package kazoo

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidGroupName is wrapped by every error about a consumer group name
// that cannot be a znode name. The error quotes the name and says why.
var ErrInvalidGroupName = errors.New("kazoo: invalid consumer group name")

// ErrInvalidInstanceID is wrapped by every error about a consumer instance
// id that cannot be a znode name. The error quotes the id and says why.
var ErrInvalidInstanceID = errors.New("kazoo: invalid consumer instance id")

// ErrInvalidPartition is wrapped by errors about a negative partition id.
var ErrInvalidPartition = errors.New("kazoo: invalid partition id")

// ValidateGroupName reports whether name can be a consumer group name: one
// znode name, so not empty, neither "." nor "..", and without "/" or control
// characters. The error wraps ErrInvalidGroupName.
//
// Every method of Consumergroup checks its name this way before building a
// znode path from it.
func ValidateGroupName(name string) error {
	return checkZnodeName(ErrInvalidGroupName, name)
}

// ValidateInstanceID is ValidateGroupName for consumer instance ids; the
// error wraps ErrInvalidInstanceID. Ids from NewInstance always pass.
func ValidateInstanceID(id string) error {
	return checkZnodeName(ErrInvalidInstanceID, id)
}

func checkZnodeName(kind error, name string) error {
	bad := func(reason string) error { return fmt.Errorf("%w %q: %s", kind, name, reason) }
	switch {
	case name == "":
		return bad("it is empty")
	case name == "." || name == "..":
		return bad(`"." and ".." are not allowed`)
	case strings.Contains(name, "/"):
		return bad(`it must not contain "/"`)
	}
	for i, r := range name {
		if r < 0x20 || r == 0x7f {
			return bad(fmt.Sprintf("control character %U at offset %d", r, i))
		}
	}
	return nil
}

// checkTopicPartition validates the topic and partition a claim or offset
// path is built from.
func checkTopicPartition(topic string, partition int32) error {
	if err := ValidateTopicName(topic); err != nil {
		return err
	}
	if partition < 0 {
		return fmt.Errorf("%w %d of topic %q: must be >= 0", ErrInvalidPartition, partition, topic)
	}
	return nil
}
