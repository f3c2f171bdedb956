package assign

import (
	"errors"
	"fmt"

	"github.com/zkgroup/kafka/kazoo"
)

// ErrInvalidPattern: a topic pattern is empty or is not a regular
// expression Go can compile. Returned wrapped, with the pattern and the
// reason.
var ErrInvalidPattern = errors.New("consumergroup: invalid topic pattern")

// WhiteList is this instance's white_list subscription: the expression it
// registers and the topics that expression covers.
type WhiteList struct {
	expr string       // as registered: normalized as Kafka does
	sub  Subscription // read as every member reads the registration
}

// NewWhiteList normalizes and compiles pattern, as Kafka's whitelist; an
// error wraps ErrInvalidPattern.
func NewWhiteList(pattern string) (*WhiteList, error) {
	expr := TopicRegex(pattern)
	if expr == "" {
		return nil, fmt.Errorf("%w: %q is empty", ErrInvalidPattern, pattern)
	}
	sub, err := ParseSubscription(&kazoo.Registration{Pattern: kazoo.RegPatternWhiteList, Subscription: map[string]int{expr: 1}})
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrInvalidPattern, pattern, err)
	}
	return &WhiteList{expr: expr, sub: sub}, nil
}

// String returns the registered expression ("" for a nil white list).
func (f *WhiteList) String() string {
	if f == nil {
		return ""
	}
	return f.expr
}

// Includes reports whether the white list covers topic.
func (f *WhiteList) Includes(topic string) bool { return f.sub.Includes(topic) }
