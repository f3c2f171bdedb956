package assign

import (
	"errors"
	"testing"
)

func TestWhiteList(t *testing.T) {
	f, err := NewWhiteList(` "orders\..*, audit" `)
	if err != nil {
		t.Fatal(err)
	}
	if f.String() != `orders\..*|audit` {
		t.Fatalf("registered expression %q, want Kafka's normalized form", f.String())
	}
	for topic, want := range map[string]bool{
		"orders.eu": true, "audit": true, "audits": false, "xorders.eu": false,
		"ordersXeu": false, "__consumer_offsets": false,
	} {
		if got := f.Includes(topic); got != want {
			t.Errorf("Includes(%q) = %v, want %v", topic, got, want)
		}
	}
	internal, err := NewWhiteList(".*")
	if err != nil || internal.Includes("__consumer_offsets") || !internal.Includes("t") {
		t.Fatalf(".* must match every topic but Kafka's internal ones (%v)", err)
	}
	for _, bad := range []string{"", "  ", `"'`, "(", `a(?=b)`} {
		if _, err := NewWhiteList(bad); !errors.Is(err, ErrInvalidPattern) {
			t.Errorf("NewWhiteList(%q) = %v, want ErrInvalidPattern", bad, err)
		}
	}
}
