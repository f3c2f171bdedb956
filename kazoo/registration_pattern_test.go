package kazoo

import (
	"encoding/json"
	"reflect"
	"testing"
)

// RegisterWhiteList writes Kafka's whitelist registration: pattern
// "white_list", the expression as the only subscription key, one stream.
func TestWhiteListRegistrationWire(t *testing.T) {
	data, err := whiteListRegistration(`orders\..*|audit`)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Pattern      string         `json:"pattern"`
		Subscription map[string]int `json:"subscription"`
		Timestamp    int64          `json:"timestamp"`
		Version      int            `json:"version"`
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if wire.Pattern != "white_list" || wire.Version != 1 || !recentSeconds(wire.Timestamp) ||
		!reflect.DeepEqual(wire.Subscription, map[string]int{`orders\..*|audit`: 1}) {
		t.Fatalf("registration %s", data)
	}
	reg, err := parseRegistration("/x", data)
	if err != nil || reg.Pattern != RegPatternWhiteList {
		t.Fatalf("parse back: %+v, %v", reg, err)
	}
	if _, err := whiteListRegistration(""); err == nil {
		t.Fatal("an empty expression must be refused")
	}
}
