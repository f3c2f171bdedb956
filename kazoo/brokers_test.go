package kazoo

import (
	"errors"
	"testing"
)

func TestParseBrokerRegistration(t *testing.T) {
	const kafka39 = `{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,"port":9092,"host":"127.0.0.1","version":5,"timestamp":"1764453341000"}`
	// No PLAINTEXT listener: Kafka writes no host and port -1.
	const saslOnly = `{"listener_security_protocol_map":{"INTERNAL":"SASL_PLAINTEXT","EXTERNAL":"SASL_SSL"},"endpoints":["INTERNAL://10.0.0.5:9093","EXTERNAL://[2001:db8::1]:9094"],"jmx_port":-1,"port":-1,"host":null,"version":5,"rack":"r1","timestamp":"1"}`
	const legacy = `{"jmx_port":-1,"timestamp":"1","host":"kafka1","version":1,"port":9092}`

	b, err := ParseBrokerRegistration("/brokers/ids/1", 1, []byte(kafka39))
	if err != nil {
		t.Fatal(err)
	}
	if b.ID != 1 || len(b.Endpoints) != 1 || b.Endpoints[0] != (Endpoint{"PLAINTEXT", "127.0.0.1", 9092}) || b.Version != 5 {
		t.Errorf("kafka 3.9 registration parsed as %+v", b)
	}
	if got := b.Address("PLAINTEXT"); got != "127.0.0.1:9092" {
		t.Errorf("Address(PLAINTEXT) = %s", got)
	}

	b, err = ParseBrokerRegistration("/brokers/ids/2", 2, []byte(saslOnly))
	if err != nil {
		t.Fatal(err)
	}
	for listener, want := range map[string]string{
		"INTERNAL":       "10.0.0.5:9093",
		"external":       "[2001:db8::1]:9094", // names are case-insensitive
		"SASL_SSL":       "[2001:db8::1]:9094", // by security protocol
		"SASL_PLAINTEXT": "10.0.0.5:9093",
		"PLAINTEXT":      "10.0.0.5:9093", // no such listener or protocol: the first endpoint
	} {
		if got := b.Address(listener); got != want {
			t.Errorf("Address(%s) = %s, want %s", listener, got, want)
		}
	}
	if b.Rack != "r1" {
		t.Errorf("rack = %q", b.Rack)
	}

	b, err = ParseBrokerRegistration("/brokers/ids/3", 3, []byte(legacy))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Address("PLAINTEXT"); got != "kafka1:9092" {
		t.Errorf("legacy Address = %s", got)
	}

	for _, bad := range []string{
		``, `{`, `[]`, `{"endpoints":"PLAINTEXT://h:1"}`,
		`{"endpoints":["h:9092"]}`, `{"endpoints":["PLAINTEXT://h"]}`, `{"endpoints":["PLAINTEXT://h:0"]}`,
		`{"endpoints":["PLAINTEXT://h:99999"]}`, `{"endpoints":["://h:1"]}`,
		`{"host":"h"}`, `{"port":9092}`, `{}`,
	} {
		_, err := ParseBrokerRegistration("/brokers/ids/9", 9, []byte(bad))
		var ze *ZnodeError
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &ze) || ze.Path != "/brokers/ids/9" {
			t.Errorf("ParseBrokerRegistration(%q) = %v; want ErrMalformed naming /brokers/ids/9", bad, err)
		}
	}
}
