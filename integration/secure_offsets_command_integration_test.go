package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationSecureOffsetsCommand runs cmd/zkgroup-offsets, built
// for the test, against a group whose members reach Kafka over TLS +
// SCRAM and ZooKeeper over TLS, its nodes under the recommended digest
// ACL: show reads what the members committed, and a reset is refused
// without the group's digest credentials and written with them.
func TestIntegrationSecureOffsetsCommand(t *testing.T) {
	s := secureEnv(t)
	bin := filepath.Join(t.TempDir(), "zkgroup-offsets")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/zkgroup-offsets").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const partitions = 2
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	user, pw := group, randomPassword()
	counts := produce(t, topic, 40)

	l := newLedger()
	m := joinVia(t, s.zkTLS, group, []string{topic}, s.groupConfig(t, user, pw))
	done := readGroup(m, 1, l, 0, func(err error) { t.Logf("member: %v", err) })
	waitFor(t, 60*time.Second, "every message", func() bool { return l.missing(topic, counts) == 0 })
	closeGroup(t, m)
	<-done

	pwFile := filepath.Join(t.TempDir(), "zk.password")
	if err := os.WriteFile(pwFile, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secure := func(cmd string, digest bool, args ...string) (string, int) {
		full := []string{cmd, "-zookeeper", s.zkTLS, "-listener", "SASL_SSL",
			"-zk-tls-ca", filepath.Join(s.dir, "ca.pem"), "-zk-tls-cert", filepath.Join(s.dir, "client-cert.pem"), "-zk-tls-key", filepath.Join(s.dir, "client-key.pem"),
			"-kafka-tls-ca", filepath.Join(s.dir, "ca.pem"), "-sasl-user", s.scramUser, "-sasl-password-file", filepath.Join(s.dir, "scram.password")}
		if digest {
			full = append(full, "-zk-user", user, "-zk-password-file", pwFile)
		}
		out, err := exec.Command(bin, append(full, args...)...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		t.Logf("zkgroup-offsets %s (digest %v) %s -> %d\n%s", cmd, digest, strings.Join(args, " "), code, out)
		return string(out), code
	}

	out, code := secure("show", true, "-group", group, "-json")
	if code != 0 {
		t.Fatalf("show exited %d", code)
	}
	var st struct {
		Partitions []struct {
			Topic     string
			Partition int32
			Committed *int64
		}
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Partitions {
		if p.Committed == nil || *p.Committed != counts[p.Partition] {
			t.Errorf("show: %s/%d committed %v, the member consumed %d", p.Topic, p.Partition, p.Committed, counts[p.Partition])
		}
	}
	if len(st.Partitions) != partitions {
		t.Errorf("show lists %d partitions, want %d", len(st.Partitions), partitions)
	}

	if _, code := secure("reset", false, "-group", group, "-topic", topic, "-execute", "earliest"); code != 1 {
		t.Errorf("reset without the group's digest credentials exited %d, want 1", code)
	}
	if _, code := secure("reset", true, "-group", group, "-topic", topic, "-execute", "earliest"); code != 0 {
		t.Fatalf("reset with the digest credentials exited %d", code)
	}
	conf := kazoo.NewConfig()
	conf.TLS = s.zkClientTLS(t)
	conf.Auth = []kazoo.Auth{kazoo.DigestAuth(user, pw)}
	got, err := connectSecureZK(t, s, conf).Consumergroup(group).FetchAllOffsets()
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(partitions) {
		if got[topic][p] != 0 {
			t.Errorf("after reset to earliest %s/%d holds %d", topic, p, got[topic][p])
		}
	}
}
