package kazoo

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The parsers read znodes anyone with write access may have written: they
// must never panic, and every error must wrap ErrMalformed and name the path.

func checkParseError(t *testing.T, err error, path string) {
	t.Helper()
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("error %q does not wrap ErrMalformed", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q does not name %s", err, path)
	}
}

func FuzzParsePartitionMap(f *testing.F) {
	for _, seed := range []string{
		kafkaAssignment,
		`{"version":1,"partitions":{"0":[1,2],"1":[2,3],"2":[3,1]}}`,
		`{"partitions":{"0":[1],"2":[1]}}`,
		`{"partitions":{"0":[1],"0":[2]}}`,
		`{"partitions":{"-1":[1]}}`,
		`{"partitions":{"0":[]}}`,
		`{"partitions":{"01":[1],"1":[1]}}`,
		`{"partitions":{"2147483647":[1]}}`,
		`{"partitions":null}`,
		`null`, ``, `[`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parsePartitionMap(testPath, data)
		if err != nil {
			checkParseError(t, err, testPath)
			return
		}
		if len(got) == 0 {
			t.Fatal("no partitions and no error")
		}
		for id, replicas := range got {
			if err := checkBrokerIDs(replicas); err != nil {
				t.Fatalf("partition %d: %v", id, err)
			}
		}
		// What we accept survives our own encoding unchanged.
		enc, err := marshalPartitionMap(got)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parsePartitionMap(testPath, enc)
		if err != nil {
			t.Fatalf("re-parsing %s: %v", enc, err)
		}
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("round trip changed %v into %v", got, again)
		}
	})
}

func FuzzParsePartitionState(f *testing.F) {
	const p = "/brokers/topics/t/partitions/0/state"
	for _, seed := range []string{
		`{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}`,
		`{"leader":-1,"isr":[]}`,
		`{"leader":-2,"isr":[1]}`,
		`{"leader":1,"isr":null}`,
		`{"leader":1,"isr":[1,1]}`,
		`{"isr":[1]}`,
		`null`, ``, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parsePartitionState(p, data)
		if err != nil {
			checkParseError(t, err, p)
			return
		}
		if s.Leader < -1 {
			t.Fatalf("accepted leader %d", s.Leader)
		}
		if s.ISR == nil {
			t.Fatal("accepted a state without ISR")
		}
		for i, id := range s.ISR {
			if id < 0 || slices.Contains(s.ISR[:i], id) {
				t.Fatalf("accepted ISR %v", s.ISR)
			}
		}
	})
}

func FuzzParseTopicConfig(f *testing.F) {
	const p = "/config/topics/t"
	for _, seed := range []string{`{"version":1,"config":{}}`, `{"config":{"a":"b"}}`, `{"config":{"a":1}}`, `null`, ``} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseTopicConfig(p, data)
		if err != nil {
			checkParseError(t, err, p)
			return
		}
		if c == nil {
			t.Fatal("nil config without error")
		}
	})
}

func FuzzParseBrokerRegistration(f *testing.F) {
	const p = "/brokers/ids/1"
	for _, seed := range []string{
		`{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,"port":9092,"host":"127.0.0.1","version":5,"timestamp":"1795989340149"}`,
		`{"listener_security_protocol_map":{"INTERNAL":"SSL"},"endpoints":["INTERNAL://[::1]:9093"],"host":"","port":-1,"version":4}`,
		`{"host":"kafka1","port":9092,"version":1}`,
		`{"endpoints":["://x:1"]}`,
		`{"endpoints":["PLAINTEXT://x:0"]}`,
		`{"endpoints":[]}`,
		`{"endpoints":null,"host":"a","port":1}`,
		`null`, ``, `[`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBrokerRegistration(p, 1, data)
		if err != nil {
			checkParseError(t, err, p)
			return
		}
		// Every accepted registration has an address for any listener.
		for _, l := range []string{"PLAINTEXT", "SSL", "internal", ""} {
			if addr := b.Address(l); addr == "" {
				t.Fatalf("no address for listener %q in %+v", l, b)
			}
		}
	})
}
