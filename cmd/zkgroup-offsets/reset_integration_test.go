package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
)

// A reset is refused while a member is registered; with -force it is
// written fenced, and the running member, which had consumed and committed
// everything, delivers again from exactly the new offset.
func TestIntegrationResetForceRedelivers(t *testing.T) {
	testenv.Integration(t)
	const parts, n = 2, 10
	topic := newTopic(t, parts)
	produceEach(t, topic, parts, n, time.Time{})
	kz := connectZK(t)
	group := testenv.UniqueName("reset-force")
	deleteGroupAfter(t, kz, group)

	member := joinMember(t, group, topic)
	consumed := map[int32]int64{}
	deadline := time.After(60 * time.Second)
	for consumed[0] < n || consumed[1] < n {
		select {
		case m := <-member.Messages():
			consumed[m.Partition] = m.Offset + 1
			_ = member.CommitUpto(m)
		case err := <-member.Errors():
			t.Logf("member: %v", err)
		case <-deadline:
			t.Fatalf("consumed %v after 60s", consumed)
		}
	}
	all := map[int32]int64{0: n, 1: n}
	waitFor(t, 10*time.Second, "everything committed", func() bool { return maps.Equal(offsetsOf(t, kz, group, topic), all) })

	zkgoFails(t, []string{"instances are registered", "-force"}, "reset", "-group", group, "-topic", topic, "-execute", "to", "3")
	if got := offsetsOf(t, kz, group, topic); !maps.Equal(got, all) {
		t.Fatalf("a refused reset changed the offsets to %v", got)
	}
	out := zkgoOK(t, "reset", "-group", group, "-topic", topic, "-force", "-execute", "to", "3")
	if !strings.Contains(out, "read back: all match") {
		t.Errorf("output lacks the read-back check:\n%s", out)
	}

	// The member had nothing left to deliver; now it must deliver 3..9 of
	// each partition again, in order, starting at exactly 3.
	next := map[int32]int64{0: 3, 1: 3}
	deadline = time.After(60 * time.Second)
	for next[0] < n || next[1] < n {
		select {
		case m := <-member.Messages():
			if m.Offset != next[m.Partition] {
				t.Fatalf("after the reset to 3 the member delivered %s/%d at offset %d, want %d", m.Topic, m.Partition, m.Offset, next[m.Partition])
			}
			next[m.Partition]++
			_ = member.CommitUpto(m)
		case err := <-member.Errors():
			t.Logf("member: %v", err)
		case <-deadline:
			t.Fatalf("after the reset the member redelivered up to %v in 60s, want %d on each", next, n)
		}
	}
	select {
	case m := <-member.Messages():
		t.Fatalf("an extra message after the redelivery: %s/%d@%d", m.Topic, m.Partition, m.Offset)
	case <-time.After(500 * time.Millisecond):
	}
	waitFor(t, 10*time.Second, "the redelivery committed", func() bool { return maps.Equal(offsetsOf(t, kz, group, topic), all) })
}

// Each reset target, dry run and execute, and -partitions.
func TestIntegrationResetTargets(t *testing.T) {
	testenv.Integration(t)
	const parts, n = 2, 10
	topic := newTopic(t, parts)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	produceEach(t, topic, parts, n, base) // message i at base + i minutes
	kz := connectZK(t)
	group := testenv.UniqueName("reset-targets")
	deleteGroupAfter(t, kz, group)
	cg := kz.Consumergroup(group)
	for p := range int32(parts) {
		if err := cg.CommitOffset(topic, p, 6); err != nil {
			t.Fatal(err)
		}
	}

	out := zkgoOK(t, "reset", "-group", group, "-topic", topic, "earliest")
	if !strings.Contains(out, "dry run") || !maps.Equal(offsetsOf(t, kz, group, topic), map[int32]int64{0: 6, 1: 6}) {
		t.Fatalf("a dry run wrote: %v\n%s", offsetsOf(t, kz, group, topic), out)
	}
	for _, c := range []struct {
		args []string
		want map[int32]int64
	}{
		{[]string{"earliest"}, map[int32]int64{0: 0, 1: 0}},
		{[]string{"latest"}, map[int32]int64{0: n, 1: n}},
		{[]string{"shift", "-4"}, map[int32]int64{0: 6, 1: 6}},
		{[]string{"shift", "-100"}, map[int32]int64{0: 0, 1: 0}}, // clamped
		{[]string{"shift", "+3"}, map[int32]int64{0: 3, 1: 3}},
		{[]string{"shift", "100"}, map[int32]int64{0: n, 1: n}}, // clamped
		{[]string{"to", "7"}, map[int32]int64{0: 7, 1: 7}},
		// The first message at or after base + 4.5 min is message 5.
		{[]string{base.Add(270 * time.Second).Format(time.RFC3339)}, map[int32]int64{0: 5, 1: 5}},
		{[]string{base.Add(-time.Hour).Format(time.RFC3339)}, map[int32]int64{0: 0, 1: 0}},
		{[]string{time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, map[int32]int64{0: n, 1: n}}, // nothing that recent
	} {
		args := append([]string{"reset", "-group", group, "-all-topics", "-execute"}, c.args...)
		zkgoOK(t, args...)
		if got := offsetsOf(t, kz, group, topic); !maps.Equal(got, c.want) {
			t.Fatalf("reset %q: offsets %v, want %v", c.args, got, c.want)
		}
	}
	zkgoOK(t, "reset", "-group", group, "-topic", topic, "-partitions", "1", "-execute", "to", "2")
	if got := offsetsOf(t, kz, group, topic); !maps.Equal(got, map[int32]int64{0: n, 1: 2}) {
		t.Fatalf("reset of partition 1 only: %v", got)
	}

	// show: committed, high-water mark and lag.
	var st GroupState
	if err := json.Unmarshal([]byte(zkgoOK(t, "show", "-group", group, "-json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Partitions) != parts {
		t.Fatalf("show lists %d partitions, want %d: %+v", len(st.Partitions), parts, st)
	}
	for _, p := range st.Partitions {
		want := map[int32]int64{0: n, 1: 2}[p.Partition]
		if p.Committed == nil || *p.Committed != want || p.HighWater == nil || *p.HighWater != n || p.Lag == nil || *p.Lag != n-want {
			t.Errorf("show %s/%d = committed %s high-water %s lag %s; want %d, %d, %d", p.Topic, p.Partition,
				orDash(p.Committed), orDash(p.HighWater), orDash(p.Lag), want, n, n-want)
		}
	}
	table := zkgoOK(t, "show", "-group", group)
	if !strings.Contains(table, "HIGH-WATER") || !strings.Contains(table, "0 registered instances") {
		t.Errorf("show's table:\n%s", table)
	}
}

// Errors name what is wrong, and nothing is written.
func TestIntegrationErrors(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 2)
	produceEach(t, topic, 2, 10, time.Time{})
	kz := connectZK(t)
	group := testenv.UniqueName("errors")
	deleteGroupAfter(t, kz, group)
	if err := kz.Consumergroup(group).CommitOffset(topic, 1, 4); err != nil {
		t.Fatal(err)
	}
	missing := testenv.UniqueName("no-such-group")
	noTopic := testenv.UniqueName("no-such-topic")

	for _, args := range [][]string{
		{"show", "-group", missing},
		{"export", "-group", missing},
		{"reset", "-group", missing, "-topic", topic, "earliest"},
		{"transfer", "-group", missing, "-to", "kafka"},
	} {
		zkgoFails(t, []string{"consumer group \"" + missing + "\" does not exist in ZooKeeper"}, args...)
	}
	zkgoFails(t, []string{"Kafka group " + missing, "has no committed offsets"}, "transfer", "-group", group, "-kafka-group", missing, "-to", "zookeeper")
	zkgoFails(t, []string{"topic does not exist", noTopic}, "reset", "-group", group, "-topic", noTopic, "-execute", "earliest")
	zkgoFails(t, []string{"topic " + topic + " has no partition 7 (it has partitions 0-1)"}, "reset", "-group", group, "-topic", topic, "-partitions", "0,7", "-execute", "earliest")
	zkgoFails(t, []string{topic + "/0: offset 11 is out of range: the partition holds [0, 10]", topic + "/1: offset 11"},
		"reset", "-group", group, "-topic", topic, "-execute", "to", "11")
	zkgoFails(t, []string{topic + "/0: no committed offset to shift"}, "reset", "-group", group, "-topic", topic, "-execute", "shift", "-1")
	if got := offsetsOf(t, kz, group, topic); !maps.Equal(got, map[int32]int64{1: 4}) {
		t.Fatalf("failed resets wrote: %v", got)
	}
}

// An export imported after the offsets moved puts them back exactly;
// imports check ranges and can go to another group.
func TestIntegrationExportImport(t *testing.T) {
	testenv.Integration(t)
	t1, t2 := newTopic(t, 2), newTopic(t, 1)
	produceEach(t, t1, 2, 10, time.Time{})
	produceEach(t, t2, 1, 5, time.Time{})
	kz := connectZK(t)
	group := testenv.UniqueName("export")
	other := testenv.UniqueName("import")
	deleteGroupAfter(t, kz, group)
	deleteGroupAfter(t, kz, other)
	want := map[string]map[int32]int64{t1: {0: 3, 1: 9}, t2: {0: 5}}
	if err := kz.Consumergroup(group).ResetOffsetsTo(want); err != nil {
		t.Fatal(err)
	}

	file := filepath.Join(t.TempDir(), "offsets.json")
	zkgoOK(t, "export", "-group", group, "-o", file)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f OffsetsFile
	if err := json.Unmarshal(data, &f); err != nil || f.Version != 1 || f.Group != group || !maps.EqualFunc(f.Offsets, want, maps.Equal) {
		t.Fatalf("export = %+v (%v), want group %s offsets %v:\n%s", f, err, group, want, data)
	}
	if !strings.Contains(string(data), `"0": 3`) {
		t.Errorf("partitions are not keyed by their decimal id:\n%s", data)
	}

	zkgoOK(t, "reset", "-group", group, "-all-topics", "-execute", "earliest")
	out := zkgoOK(t, "import", file)
	if !strings.Contains(out, "dry run") || offsetsOf(t, kz, group, t1)[1] != 0 {
		t.Fatalf("the import's dry run wrote:\n%s", out)
	}
	zkgoOK(t, "import", "-execute", file)
	for topic, w := range want {
		if got := offsetsOf(t, kz, group, topic); !maps.Equal(got, w) {
			t.Fatalf("%s after the import: %v, want %v", topic, got, w)
		}
	}

	zkgoOK(t, "import", "-group", other, "-execute", file)
	for topic, w := range want {
		if got := offsetsOf(t, kz, other, topic); !maps.Equal(got, w) {
			t.Fatalf("%s imported into another group: %v, want %v", topic, got, w)
		}
	}

	// An offset beyond the high-water mark: refused with the range, or
	// clamped on request.
	bad := strings.Replace(string(data), `"1": 9`, `"1": 25`, 1)
	badFile := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(badFile, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	zkgoFails(t, []string{t1 + "/1: offset 25 is out of range: the partition holds [0, 10]"}, "import", "-execute", badFile)
	if got := offsetsOf(t, kz, group, t1); got[1] != 9 {
		t.Fatalf("a refused import wrote: %v", got)
	}
	zkgoOK(t, "import", "-clamp", "-execute", badFile)
	if got := offsetsOf(t, kz, group, t1); got[1] != 10 {
		t.Fatalf("a clamped import: %v, want partition 1 at 10", got)
	}
}
