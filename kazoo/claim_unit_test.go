package kazoo

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
)

func TestFailedOp(t *testing.T) {
	for _, tc := range []struct {
		resp []zk.MultiResponse
		want int
	}{
		{nil, -1}, // the request failed as a whole
		{[]zk.MultiResponse{{}, {}}, -1},
		{[]zk.MultiResponse{{Error: zk.ErrBadVersion}, {Error: errors.New("rolled back")}}, 0},
		{[]zk.MultiResponse{{}, {Error: zk.ErrNodeExists}}, 1},
	} {
		if got := failedOp(tc.resp); got != tc.want {
			t.Errorf("failedOp(%v) = %d, want %d", tc.resp, got, tc.want)
		}
	}
}

func TestClaimErrorsRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{znodeErr("claim", "/p", fmt.Errorf("%w after 3 attempts", ErrClaimContended)), true},
		{znodeErr("claim", "/p", zk.ErrConnectionClosed), true},
		{fmt.Errorf("%w: /p is owned by %q", ErrPartitionClaimedByOther, "x"), false},
		{fmt.Errorf("%w: t/0", ErrClaimLost), false},
		{&OffsetConflictError{Topic: "t", Stored: 1, Version: 2}, false},
	} {
		if got := IsRetryable(tc.err); got != tc.want {
			t.Errorf("IsRetryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestParseOffset(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "42": 42, " 7\n": 7, "9223372036854775807": 1<<63 - 1} {
		if got, err := parseOffset("/p", []byte(in)); err != nil || got != want {
			t.Errorf("parseOffset(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "1.5", "-1", "12abc", `{"offset":1}`, "9223372036854775808"} {
		_, err := parseOffset("/consumers/g/offsets/t/0", []byte(in))
		var ze *ZnodeError
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &ze) || ze.Path != "/consumers/g/offsets/t/0" {
			t.Errorf("parseOffset(%q): err = %v, want a malformed-znode error naming the path", in, err)
		}
	}
}

func TestCheckClaimArguments(t *testing.T) {
	kz := &Kazoo{conf: NewConfig()} // never connected: every call below must fail before using it
	inst := kz.Consumergroup("g").Instance("a")
	c := &PartitionClaim{Topic: "t", Partition: 0, InstanceID: "a", Epoch: 1}
	for name, err := range map[string]error{
		"nil claim":        inst.Release(nil),
		"other instance":   kz.Consumergroup("g").Instance("b").Release(c),
		"bad topic":        inst.Release(&PartitionClaim{Topic: "a/b", InstanceID: "a"}),
		"negative offset":  second(inst.CommitOffsetFenced(c, -1, 0)),
		"version below -1": second(inst.CommitOffsetFenced(c, 1, -2)),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
