package kazoo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Registration is the JSON an instance stores at /consumers/<g>/ids/<id>,
// in the format of Kafka's high-level consumer.
type Registration struct {
	Pattern      RegPattern     `json:"pattern"`
	Subscription map[string]int `json:"subscription"` // topic -> number of streams
	// Timestamp is when the instance registered, in Unix seconds. Register
	// writes it as a JSON number of seconds, as kazoo-go does; reading
	// accepts the other writers' forms too (see UnmarshalJSON).
	Timestamp int64      `json:"timestamp"`
	Version   RegVersion `json:"version"`
	// Assignment lists the assignment strategies the instance offers to
	// use once every member of the group offers them (package
	// consumergroup's "sticky"; see docs/assignment.md). Upstream and
	// Kafka neither write it nor read it; written only when not empty.
	Assignment []string `json:"assignment,omitempty"`
}

// RegPattern is how an instance subscribes to topics.
type RegPattern string

// Subscription patterns of Kafka's high-level consumer. Register writes
// RegPatternStatic.
const (
	RegPatternStatic    RegPattern = "static"
	RegPatternWhiteList RegPattern = "white_list"
	RegPatternBlackList RegPattern = "black_list"
)

// RegVersion is the version of the registration format.
type RegVersion int

// RegDefaultVersion is the registration format version Register writes.
const RegDefaultVersion RegVersion = 1

// millisThreshold tells a timestamp in milliseconds from one in seconds.
// Read as seconds, 1e11 is in the year 5138; read as milliseconds it is
// March 1973, before any of these registrations existed. So a value at or
// above it is milliseconds, and anything below is seconds.
const millisThreshold = 100_000_000_000

// UnmarshalJSON reads a registration written by any of the three known
// writers, which disagree on the timestamp:
//
//   - kazoo-go (and Register here): a JSON number of Unix seconds;
//   - Kafka's own ZooKeeper consumer: a JSON string of Unix milliseconds;
//   - earlier versions of this package: a JSON string of Unix seconds.
//
// A number or a numeric string is accepted; a value of at least 1e11 is
// taken as milliseconds (as seconds it would be more than three thousand
// years ahead) and converted to seconds. A missing or null timestamp reads
// as 0; any other timestamp (a fraction, a non-numeric string) is an error.
func (r *Registration) UnmarshalJSON(data []byte) error {
	type plain Registration // the same fields without this method
	var raw struct {
		plain
		Timestamp json.RawMessage `json:"timestamp"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	ts, err := parseRegistrationTimestamp(raw.Timestamp)
	if err != nil {
		return err
	}
	*r = Registration(raw.plain)
	r.Timestamp = ts
	return nil
}

// parseRegistrationTimestamp returns the timestamp of a registration in Unix
// seconds; see Registration.UnmarshalJSON.
func parseRegistrationTimestamp(raw json.RawMessage) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return 0, nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, err
		}
	}
	ts, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("registration timestamp %s is not an integer of Unix seconds or milliseconds", raw)
	}
	if ts >= millisThreshold {
		ts /= 1000
	}
	return ts, nil
}

// parseRegistration parses an instance registration; path names the znode
// in errors, which wrap ErrMalformed.
func parseRegistration(path string, data []byte) (*Registration, error) {
	reg := &Registration{}
	if err := json.Unmarshal(data, reg); err != nil {
		return nil, malformed(path, "registration cannot be read: %v", err)
	}
	return reg, nil
}
