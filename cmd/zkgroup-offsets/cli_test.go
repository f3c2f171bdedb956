package main

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParsePartitions(t *testing.T) {
	got, err := parsePartitions(" 3,1, 1,,0 ")
	if err != nil || !slices.Equal(got, []int32{0, 1, 3}) {
		t.Errorf("parsePartitions = %v, %v", got, err)
	}
	for _, bad := range []string{"-1", "a", "1,x", "99999999999"} {
		if _, err := parsePartitions(bad); err == nil {
			t.Errorf("parsePartitions(%q) accepted", bad)
		}
	}
}

func TestSelectPartitions(t *testing.T) {
	all := []int32{0, 1, 2, 3}
	if got, err := selectPartitions("t", all, nil); err != nil || !slices.Equal(got, all) {
		t.Errorf("no selection: %v, %v", got, err)
	}
	if got, err := selectPartitions("t", all, []int32{1, 3}); err != nil || !slices.Equal(got, []int32{1, 3}) {
		t.Errorf("selection: %v, %v", got, err)
	}
	_, err := selectPartitions("t", all, []int32{1, 4, 7})
	if !errors.Is(err, errNoPartition) || !strings.Contains(err.Error(), "no partition 4, 7 (it has partitions 0-3)") {
		t.Errorf("missing partitions: %v", err)
	}
	if got := describeIDs([]int32{0, 2, 5}); got != "partitions 0, 2, 5" {
		t.Errorf("describeIDs = %q", got)
	}
	if got := describeIDs([]int32{0}); got != "partition 0" {
		t.Errorf("describeIDs = %q", got)
	}
}

func TestReadOffsetsFile(t *testing.T) {
	f, err := readOffsetsFile(strings.NewReader(`{"version":1,"group":"g","offsets":{"t":{"0":5,"12":7}}}`))
	if err != nil || f.Group != "g" || f.Offsets["t"][0] != 5 || f.Offsets["t"][12] != 7 {
		t.Fatalf("readOffsetsFile = %+v, %v", f, err)
	}
	for _, bad := range []string{
		`{"version":2,"group":"g","offsets":{"t":{"0":5}}}`,
		`{"version":1,"group":"g","offsets":{}}`,
		`{"version":1,"group":"g","offsets":{"t":{"0":-1}}}`,
		`{"version":1,"group":"g","offsets":{"t":{"x":1}}}`,
		`{"version":1,"group":"g","offset":{"t":{"0":1}}}`,
		`[]`,
	} {
		if f, err := readOffsetsFile(strings.NewReader(bad)); err == nil {
			t.Errorf("readOffsetsFile(%s) = %+v, want an error", bad, f)
		}
	}
}

// Usage errors exit with 2 and say what is wrong before anything connects.
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage:"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"show"}, 2, "-group is required"},
		{[]string{"show", "-h"}, 0, "usage: zkgroup-offsets show"},
		{[]string{"reset", "-group", "g", "earliest"}, 2, "exactly one of -topic and -all-topics"},
		{[]string{"reset", "-group", "g", "-topic", "t"}, 2, "missing"},
		{[]string{"reset", "-group", "g", "-topic", "t", "oldest"}, 2, `unknown TARGET "oldest"`},
		{[]string{"reset", "-group", "g", "-topic", "a,b", "-partitions", "1", "latest"}, 2, "-partitions needs exactly one -topic"},
		{[]string{"reset", "-group", "g", "-topic", "t", "-partitions", "x", "latest"}, 2, "-partitions"},
		{[]string{"transfer", "-group", "g"}, 2, "-to must be kafka or zookeeper"},
		{[]string{"import", "-group", "g"}, 2, "missing"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := run(c.args, &out, &errOut)
		if code != c.code || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("run(%q) = %d, stderr %q; want %d and %q", c.args, code, errOut.String(), c.code, c.want)
		}
	}
}
