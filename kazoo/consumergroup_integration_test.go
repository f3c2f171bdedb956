package kazoo

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestIntegrationConsumergroupLifecycle(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()

	cgs := cgMust(kz.Consumergroups()).get(t)
	if len(cgs) != 0 {
		t.Fatalf("fresh chroot without /consumers: Consumergroups = %v, want none", cgs)
	}
	cg := kz.Consumergroup("group-b")
	if ok := cgMust(cg.Exists()).get(t); ok {
		t.Fatal("group exists before Create")
	}
	cgNoErr(t, cg.Create())
	cgNoErr(t, cg.Create()) // idempotent
	cgNoErr(t, kz.Consumergroup("group-a").Create())
	if ok := cgMust(cg.Exists()).get(t); !ok {
		t.Fatal("group does not exist after Create")
	}

	cgs = cgMust(kz.Consumergroups()).get(t)
	if names := groupNames(cgs); !reflect.DeepEqual(names, []string{"group-a", "group-b"}) {
		t.Fatalf("Consumergroups = %v", names)
	}
	if cgs.Find("group-b") == nil || cgs.Find("nope") != nil {
		t.Fatal("ConsumergroupList.Find")
	}
	unsorted := ConsumergroupList{kz.Consumergroup("z"), kz.Consumergroup("a"), kz.Consumergroup("m")}
	sort.Sort(unsorted)
	if names := groupNames(unsorted); !reflect.DeepEqual(names, []string{"a", "m", "z"}) {
		t.Fatalf("sort.Sort(ConsumergroupList) = %v", names)
	}

	// A group with a running instance cannot be deleted; without one it goes
	// with everything below it.
	inst := cg.Instance("i1")
	cgNoErr(t, inst.Register([]string{"t"}))
	cgNoErr(t, cg.CommitOffset("t", 0, 42))
	cgNoErr(t, inst.ClaimPartition("t", 0))
	cgWantBare(t, cg.Delete(), ErrRunningInstances)
	cgNoErr(t, inst.ReleasePartition("t", 0))
	cgNoErr(t, inst.Deregister())
	cgNoErr(t, cg.Delete())
	if ok := cgMust(cg.Exists()).get(t); ok {
		t.Fatal("group exists after Delete")
	}
	cgNoErr(t, cg.Delete()) // a missing group is fine
	if names := groupNames(cgMust(kz.Consumergroups()).get(t)); !reflect.DeepEqual(names, []string{"group-a"}) {
		t.Fatalf("Consumergroups after Delete = %v", names)
	}
}

func groupNames(l ConsumergroupList) []string {
	var out []string
	for _, cg := range l {
		out = append(out, cg.Name)
	}
	return out
}

func instanceIDs(l ConsumergroupInstanceList) []string {
	out := []string{}
	for _, i := range l {
		out = append(out, i.ID)
	}
	return out
}

func TestIntegrationConsumergroupInstances(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	cg := kz.Consumergroup("g")

	if l := cgMust(cg.Instances()).get(t); len(l) != 0 {
		t.Fatalf("Instances of a missing group = %v", instanceIDs(l))
	}
	i1 := cg.NewInstance()
	if !strings.Contains(i1.ID, ":") || ValidateInstanceID(i1.ID) != nil || cg.NewInstance().ID == i1.ID {
		t.Fatalf("NewInstance id %q", i1.ID)
	}
	if id := cg.NewInstanceRealIp("10.1.2.3").ID; !strings.Contains(id, "@10.1.2.3:") {
		t.Fatalf("NewInstanceRealIp id %q", id)
	}

	_, err := i1.Registration()
	cgWantBare(t, err, ErrInstanceNotRegistered)
	if ok := cgMust(i1.Registered()).get(t); ok {
		t.Fatal("registered before Register")
	}

	list, w := watchInstances(t, cg)
	if len(list) != 0 {
		t.Fatalf("WatchInstances = %v", instanceIDs(list))
	}
	cgNoErr(t, i1.Register([]string{"t1", "t2"}))
	cgWatchEvent(t, w, EventNodeChildrenChanged)
	if ok := cgMust(i1.Registered()).get(t); !ok {
		t.Fatal("not registered after Register")
	}
	reg := cgMust(i1.Registration()).get(t)
	if reg.Pattern != RegPatternStatic || reg.Version != RegDefaultVersion ||
		!reflect.DeepEqual(reg.Subscription, map[string]int{"t1": 1, "t2": 1}) || !recentSeconds(reg.Timestamp) {
		t.Fatalf("Registration = %+v", reg)
	}

	// Registering twice fails, from this session or another.
	cgWantBare(t, cg.Instance(i1.ID).Register([]string{"t1"}), ErrInstanceAlreadyRegistered)
	other := e.client().Consumergroup("g").Instance(i1.ID)
	cgWantBare(t, other.Register([]string{"t1"}), ErrInstanceAlreadyRegistered)
	// Another session cannot update or deregister our registration.
	cgWantBare(t, other.UpdateRegistration([]string{"x"}), ErrInstanceNotRegistered)
	cgWantBare(t, other.Deregister(), ErrInstanceNotRegistered)

	i2 := cg.Instance("plain")
	cgNoErr(t, i2.RegisterWithSubscription([]byte(`{"pattern":"white_list","subscription":{"t3":2},"timestamp":"1","version":1}`)))
	list, w = watchInstances(t, cg)
	want := []string{i1.ID, "plain"}
	slices.Sort(want)
	if got := instanceIDs(list); !reflect.DeepEqual(got, want) {
		t.Fatalf("WatchInstances = %v, want %v", got, want)
	}
	if list.Find("plain") == nil || list.Find("nope") != nil {
		t.Fatal("ConsumergroupInstanceList.Find")
	}
	unsorted := ConsumergroupInstanceList{cg.Instance("b"), cg.Instance("a")}
	sort.Sort(unsorted)
	if got := instanceIDs(unsorted); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("sort.Sort(ConsumergroupInstanceList) = %v", got)
	}

	topics := cgMust(cg.OnlineTopics()).get(t)
	if got := slices.Sorted(maps.Keys(topics)); !reflect.DeepEqual(got, []string{"t1", "t2", "t3"}) {
		t.Fatalf("OnlineTopics = %v", got)
	}

	// UpdateRegistration and WatchRegistration.
	reg, rw, err := i1.WatchRegistration()
	cgNoErr(t, err)
	if len(reg.Subscription) != 2 {
		t.Fatalf("WatchRegistration = %+v", reg)
	}
	cgNoErr(t, i1.UpdateRegistration([]string{"t9"}))
	cgWatchEvent(t, rw, EventNodeDataChanged)
	if reg := cgMust(i1.Registration()).get(t); !reflect.DeepEqual(reg.Subscription, map[string]int{"t9": 1}) {
		t.Fatalf("Registration after UpdateRegistration = %+v", reg)
	}
	cgWantBare(t, cg.Instance("nobody").UpdateRegistration([]string{"x"}), ErrInstanceNotRegistered)

	// Deregister.
	_, rw, err = i1.WatchRegistration()
	cgNoErr(t, err)
	cgNoErr(t, i1.Deregister())
	cgWatchEvent(t, rw, EventNodeDeleted)
	cgWatchEvent(t, w, EventNodeChildrenChanged)
	cgWantBare(t, i1.Deregister(), ErrInstanceNotRegistered)
	cgNoErr(t, i2.Deregister())
	if l := cgMust(cg.Instances()).get(t); len(l) != 0 {
		t.Fatalf("Instances after Deregister = %v", instanceIDs(l))
	}
	_, rw, err = i1.WatchRegistration()
	cgWantBare(t, err, ErrInstanceNotRegistered)
	if rw != nil {
		t.Fatal("WatchRegistration of an unregistered instance returned a watch")
	}

	// A registration that is not JSON is reported with its path.
	cgNoErr(t, e.admin.create(e.admin.instancePath("g", "broken"), []byte("{nope"), false))
	_, err = cg.Instance("broken").Registration()
	assertMalformedAt(t, err, kz.instancePath("g", "broken"))
	_, err = cg.OnlineTopics()
	assertMalformedAt(t, err, kz.instancePath("g", "broken"))
	// WatchRegistration returns the watch with the parse error: a fix of
	// the node fires it.
	_, bw, err := cg.Instance("broken").WatchRegistration()
	assertMalformedAt(t, err, kz.instancePath("g", "broken"))
	if bw == nil {
		t.Fatal("WatchRegistration of a malformed registration returned no watch")
	}
	if _, err := e.admin.conn.Set(e.admin.instancePath("g", "broken"), []byte(`{"version":1,"subscription":{"t1":1},"pattern":"static"}`), -1); err != nil {
		t.Fatal(err)
	}
	cgWatchEvent(t, bw, EventNodeDataChanged)
}

func watchInstances(t *testing.T, cg *Consumergroup) (ConsumergroupInstanceList, <-chan Event) {
	t.Helper()
	l, w, err := cg.WatchInstances()
	if err != nil {
		t.Fatal(err)
	}
	return l, w
}

func assertMalformedAt(t *testing.T, err error, path string) {
	t.Helper()
	var ze *ZnodeError
	if !errors.Is(err, ErrMalformed) || !errors.As(err, &ze) || ze.Path != path {
		t.Fatalf("err = %v, want a malformed-znode error naming %s", err, path)
	}
}

// The kazoo-go behaviour of ClaimPartition/ReleasePartition/PartitionOwner
// for callers that do not use epochs.
func TestIntegrationConsumergroupClaimPartition(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	cg := kz.Consumergroup("g")
	cgNoErr(t, cg.Create())
	i1, i2 := cg.Instance("i1"), cg.Instance("i2") // same session, different ids
	cgNoErr(t, i1.Register([]string{"t"}))
	cgNoErr(t, i2.Register([]string{"t"}))

	if o := cgMust(cg.PartitionOwner("t", 0)).get(t); o != nil {
		t.Fatalf("PartitionOwner of an unclaimed partition = %q", o.ID)
	}
	o, w, err := cg.WatchPartitionOwner("t", 0)
	if o != nil || w != nil || err != nil {
		t.Fatalf("WatchPartitionOwner of an unclaimed partition = %v, %v, %v", o, w, err)
	}

	cgNoErr(t, i1.ClaimPartition("t", 0))
	cgNoErr(t, i1.ClaimPartition("t", 1))
	cgNoErr(t, i2.ClaimPartition("t", 2))
	cgNoErr(t, i1.ClaimPartition("t", 0)) // again: still ours
	cgWantBare(t, i2.ClaimPartition("t", 0), ErrPartitionClaimedByOther)
	cgWantBare(t, i1.ClaimPartition("t", 2), ErrPartitionClaimedByOther)
	cgWantBare(t, i2.ReleasePartition("t", 0), ErrPartitionNotClaimed)
	cgWantBare(t, i2.ReleasePartition("t", 5), ErrPartitionNotClaimed)

	if o := cgMust(cg.PartitionOwner("t", 2)).get(t); o == nil || o.ID != "i2" {
		t.Fatalf("PartitionOwner(t, 2) = %v", o)
	}
	o, w, err = cg.WatchPartitionOwner("t", 0)
	if err != nil || o == nil || o.ID != "i1" {
		t.Fatalf("WatchPartitionOwner(t, 0) = %v, %v", o, err)
	}
	cgNoErr(t, i1.ReleasePartition("t", 0))
	cgWatchEvent(t, w, EventNodeDeleted)
	cgNoErr(t, i2.ClaimPartition("t", 0))
	e.assertOwner("g", "t", 0, "i2", kz)

	tl := cgMust(cg.Topics()).get(t)
	if len(tl) != 1 || tl[0].Name != "t" {
		t.Fatalf("Topics = %v", tl)
	}
	if tl := cgMust(kz.Consumergroup("empty").Topics()).get(t); len(tl) != 0 {
		t.Fatalf("Topics of a group without claims = %v", tl)
	}

	// Another session holding the same instance id is not this instance: its
	// claims cannot be released from here.
	sameID := e.client().Consumergroup("g").Instance("i2")
	cgWantBare(t, sameID.ReleasePartition("t", 2), ErrPartitionNotClaimed)
	e.assertOwner("g", "t", 2, "i2", kz)
}

func TestIntegrationConsumergroupOffsets(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	cg := kz.Consumergroup("g")

	if all := cgMust(cg.FetchAllOffsets()).get(t); len(all) != 0 {
		t.Fatalf("FetchAllOffsets of a missing group = %v", all)
	}
	if off := cgMust(cg.FetchOffset("t", 0)).get(t); off != -1 {
		t.Fatalf("FetchOffset with no commit = %d, want -1", off)
	}
	if off, v, err := cg.FetchOffsetVersion("t", 0); off != -1 || v != -1 || err != nil {
		t.Fatalf("FetchOffsetVersion with no commit = %d, %d, %v", off, v, err)
	}
	cgNoErr(t, cg.CommitOffset("t", 0, 1234))
	cgNoErr(t, cg.CommitOffset("t", 0, 1235))
	cgNoErr(t, cg.CommitOffset("t", 3, 7))
	cgNoErr(t, cg.CommitOffset("u", 1, 0))
	if err := cg.CommitOffset("t", 0, -5); err == nil {
		t.Fatal("CommitOffset accepted a negative offset")
	}
	if off := cgMust(cg.FetchOffset("t", 0)).get(t); off != 1235 {
		t.Fatalf("FetchOffset = %d, want 1235", off)
	}
	if off, v, err := cg.FetchOffsetVersion("t", 0); off != 1235 || v != 1 || err != nil {
		t.Fatalf("FetchOffsetVersion = %d, %d, %v; want 1235, 1", off, v, err)
	}
	// Stored as a plain decimal, as Burrow and Kafka's tools read it.
	if data, _, err := e.admin.get(kz.offsetPath("g", "t", 0)); err != nil || string(data) != "1235" {
		t.Fatalf("offset node holds %q (%v), want \"1235\"", data, err)
	}
	want := map[string]map[int32]int64{"t": {0: 1235, 3: 7}, "u": {1: 0}}
	if all := cgMust(cg.FetchAllOffsets()).get(t); !reflect.DeepEqual(all, want) {
		t.Fatalf("FetchAllOffsets = %v, want %v", all, want)
	}

	// Malformed nodes are reported with their path, never a panic or a guess.
	bad := kz.offsetPath("g", "t", 9)
	cgNoErr(t, e.admin.create(bad, []byte("12abc"), false))
	_, err := cg.FetchOffset("t", 9)
	assertMalformedAt(t, err, bad)
	_, err = cg.FetchAllOffsets()
	assertMalformedAt(t, err, bad)
	cgNoErr(t, e.admin.deleteRecursive(bad))
	cgNoErr(t, e.admin.create(kz.offsetTopicPath("g", "t")+"/x", []byte("1"), false))
	_, err = cg.FetchAllOffsets()
	assertMalformedAt(t, err, kz.offsetTopicPath("g", "t")+"/x")
	cgNoErr(t, e.admin.deleteRecursive(kz.offsetTopicPath("g", "t")+"/x"))
	cgNoErr(t, e.admin.createOrUpdate(kz.offsetPath("g", "t", 3), []byte(" 8\n"), false))
	if off := cgMust(cg.FetchOffset("t", 3)).get(t); off != 8 {
		t.Fatalf("FetchOffset of \" 8\\n\" = %d", off)
	}

	cgNoErr(t, cg.ResetOffsets())
	if all := cgMust(cg.FetchAllOffsets()).get(t); len(all) != 0 {
		t.Fatalf("FetchAllOffsets after ResetOffsets = %v", all)
	}
	if off := cgMust(cg.FetchOffset("t", 0)).get(t); off != -1 {
		t.Fatalf("FetchOffset after ResetOffsets = %d", off)
	}
	cgNoErr(t, cg.ResetOffsets()) // nothing to reset
}

// Every method refuses names that would escape their znode.
func TestIntegrationConsumergroupInvalidNames(t *testing.T) {
	t.Parallel()
	e := newCGEnv(t)
	kz := e.client()
	for _, name := range []string{"", ".", "..", "a/b", "../ids", "x\x00"} {
		cg := kz.Consumergroup(name)
		calls := map[string]error{
			"Exists":       second(cg.Exists()),
			"Create":       cg.Create(),
			"Delete":       cg.Delete(),
			"Instances":    second(cg.Instances()),
			"OnlineTopics": second(cg.OnlineTopics()),
			"CommitOffset": cg.CommitOffset("t", 0, 1),
			"FetchOffset":  second(cg.FetchOffset("t", 0)),
			"Register":     cg.Instance("ok").Register(nil),
			"Claim":        second(cg.Instance("ok").Claim("t", 0)),
		}
		for call, err := range calls {
			if !errors.Is(err, ErrInvalidGroupName) {
				t.Errorf("group %q: %s: err = %v, want ErrInvalidGroupName", name, call, err)
			}
		}
		inst := kz.Consumergroup("g").Instance(name)
		for call, err := range map[string]error{
			"Register":         inst.Register(nil),
			"Registered":       second(inst.Registered()),
			"Deregister":       inst.Deregister(),
			"ClaimPartition":   inst.ClaimPartition("t", 0),
			"Claim":            second(inst.Claim("t", 0)),
			"ReleasePartition": inst.ReleasePartition("t", 0),
		} {
			if !errors.Is(err, ErrInvalidInstanceID) {
				t.Errorf("instance %q: %s: err = %v, want ErrInvalidInstanceID", name, call, err)
			}
		}
	}
	cg := kz.Consumergroup("g")
	cgWantErr(t, cg.CommitOffset("../x", 0, 1), ErrInvalidTopicName)
	cgWantErr(t, cg.Instance("i").ClaimPartition("a/b", 0), ErrInvalidTopicName)
	cgWantErr(t, cg.CommitOffset("t", -1, 1), ErrInvalidPartition)
	if exists := cgMust(e.admin.exists(e.chroot + "/consumers")).get(t); exists {
		t.Fatal("an invalid name created znodes")
	}
}

func second[T any](_ T, err error) error { return err }

func TestValidateGroupNameAndInstanceID(t *testing.T) {
	for _, ok := range []string{"g", "my.group-1_x", "host:0f3a-uuid", "host@10.0.0.1:uuid", "ünï"} {
		if err := ValidateGroupName(ok); err != nil {
			t.Errorf("ValidateGroupName(%q) = %v", ok, err)
		}
		if err := ValidateInstanceID(ok); err != nil {
			t.Errorf("ValidateInstanceID(%q) = %v", ok, err)
		}
	}
	for name, reason := range map[string]string{"": "empty", ".": `"."`, "..": `".."`, "a/b": `"/"`, "a\nb": "control"} {
		err := ValidateGroupName(name)
		if !errors.Is(err, ErrInvalidGroupName) || !strings.Contains(err.Error(), reason) {
			t.Errorf("ValidateGroupName(%q) = %v, want ErrInvalidGroupName saying %s", name, err, reason)
		}
		if err := ValidateInstanceID(name); !errors.Is(err, ErrInvalidInstanceID) {
			t.Errorf("ValidateInstanceID(%q) = %v", name, err)
		}
	}
}
