package kazoo

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestRegistrationAssignment: the strategies an instance offers are
// written as "assignment" only when there are some, so a registration
// without them keeps upstream's fields, and are read back.
func TestRegistrationAssignment(t *testing.T) {
	plain, err := json.Marshal(&Registration{Pattern: RegPatternStatic, Subscription: map[string]int{"t": 1}, Version: 1})
	if err != nil || strings.Contains(string(plain), "assignment") {
		t.Fatalf("%s, %v: want no assignment key", plain, err)
	}
	data, err := json.Marshal(&Registration{Pattern: RegPatternStatic, Subscription: map[string]int{"t": 1}, Version: 1, Assignment: []string{"sticky"}})
	if err != nil || !strings.Contains(string(data), `"assignment":["sticky"]`) {
		t.Fatalf("%s, %v", data, err)
	}
	reg, err := parseRegistration("/consumers/g/ids/a", []byte(`{"pattern":"static","subscription":{"t":1},"timestamp":"1700000000000","version":1,"assignment":["sticky","other"]}`))
	if err != nil || !slices.Equal(reg.Assignment, []string{"sticky", "other"}) || reg.Timestamp != 1_700_000_000 {
		t.Fatalf("parsed %+v, %v", reg, err)
	}
}
