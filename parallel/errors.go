package parallel

import (
	"errors"
	"fmt"
)

// MessageError is what ConsumeClaim returns when a message failed under
// FailureStop: the message, how many times fn ran for it, and fn's last
// error (Unwrap returns it).
type MessageError struct {
	Topic     string
	Partition int32
	Offset    int64
	Attempts  int
	Err       error
}

// Error implements error.
func (e *MessageError) Error() string {
	return fmt.Sprintf("parallel: %s/%d@%d failed after %d attempts: %v", e.Topic, e.Partition, e.Offset, e.Attempts, e.Err)
}

// Unwrap returns fn's last error.
func (e *MessageError) Unwrap() error { return e.Err }

// ErrNoFunc is Setup's error for a handler made with a nil fn.
var ErrNoFunc = errors.New("parallel: NewHandler needs a non-nil fn")
