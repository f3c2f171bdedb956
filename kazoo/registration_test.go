package kazoo

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// recentSeconds reports whether ts is a Unix time in seconds within a
// minute of now.
func recentSeconds(ts int64) bool {
	d := time.Since(time.Unix(ts, 0))
	return d > -time.Minute && d < time.Minute
}

func TestRegistrationTimestampForms(t *testing.T) {
	const secs, millis = 1700000000, 1700000000123
	for _, tt := range []struct {
		name, timestamp string
		want            int64
	}{
		{"kazoo-go: number of seconds", `1700000000`, secs},
		{"earlier versions: string of seconds", `"1700000000"`, secs},
		{"Kafka's consumer: string of milliseconds", `"1700000000123"`, secs},
		{"number of milliseconds", `1700000000123`, secs},
		{"just below the threshold: seconds", `99999999999`, 99999999999},
		{"the threshold: milliseconds", `"100000000000"`, 100000000},
		{"zero", `0`, 0},
		{"null", `null`, 0},
	} {
		data := `{"version":1,"pattern":"static","subscription":{"t":1},"timestamp":` + tt.timestamp + `}`
		var reg Registration
		if err := json.Unmarshal([]byte(data), &reg); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		want := Registration{Pattern: RegPatternStatic, Subscription: map[string]int{"t": 1}, Timestamp: tt.want, Version: 1}
		if !reflect.DeepEqual(reg, want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, reg, want)
		}
	}
	// No timestamp at all: 0, and the rest is read.
	reg, err := parseRegistration("/p", []byte(`{"version":1,"pattern":"white_list","subscription":{"a.*":2}}`))
	if err != nil || reg.Timestamp != 0 || reg.Pattern != RegPatternWhiteList || reg.Subscription["a.*"] != 2 {
		t.Fatalf("registration without timestamp: %+v, %v", reg, err)
	}
}

func TestRegistrationTimestampRejected(t *testing.T) {
	for _, ts := range []string{`"soon"`, `""`, `1.7e9`, `"1700000000.5"`, `true`, `{}`} {
		data := `{"version":1,"pattern":"static","subscription":{"t":1},"timestamp":` + ts + `}`
		_, err := parseRegistration("/consumers/g/ids/i", []byte(data))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "/consumers/g/ids/i") {
			t.Errorf("timestamp %s: err = %v, want ErrMalformed naming the path", ts, err)
		}
	}
}

// Register writes what kazoo-go writes: the timestamp as a JSON number of
// seconds, which kazoo-go's own json.Unmarshal into an int64 can read.
func TestStaticRegistrationWire(t *testing.T) {
	data, err := staticRegistration([]string{"b", "a"})
	if err != nil {
		t.Fatal(err)
	}
	var wire map[string]any
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.UseNumber()
	if err := d.Decode(&wire); err != nil {
		t.Fatal(err)
	}
	n, ok := wire["timestamp"].(json.Number)
	if !ok {
		t.Fatalf("timestamp %#v (%T) is not a JSON number: %s", wire["timestamp"], wire["timestamp"], data)
	}
	secs, err := n.Int64()
	if err != nil || !recentSeconds(secs) {
		t.Fatalf("timestamp %s is not the current Unix second", n)
	}
	// What a plain struct with an int64 field (kazoo-go's) reads back.
	var upstream struct {
		Pattern      string         `json:"pattern"`
		Subscription map[string]int `json:"subscription"`
		Timestamp    int64          `json:"timestamp"`
		Version      int            `json:"version"`
	}
	if err := json.Unmarshal(data, &upstream); err != nil {
		t.Fatalf("a kazoo-go reader cannot read %s: %v", data, err)
	}
	if upstream.Pattern != "static" || upstream.Version != 1 || upstream.Timestamp != secs ||
		!reflect.DeepEqual(upstream.Subscription, map[string]int{"a": 1, "b": 1}) {
		t.Fatalf("read back %+v from %s", upstream, data)
	}
}
