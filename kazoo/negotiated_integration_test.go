package kazoo

import (
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
)

// The server bounds the requested session timeout to its
// [minSessionTimeout, maxSessionTimeout], [1 s, 60 s] on the local stack:
// SessionTimeout reports what it granted, not what was asked.
func TestIntegrationSessionTimeoutIsNegotiated(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	for _, tc := range []struct{ asked, granted time.Duration }{
		{90 * time.Second, 60 * time.Second},
		{400 * time.Millisecond, time.Second},
		{6 * time.Second, 6 * time.Second},
	} {
		kz := cgConnect(t, []string{testenv.ZKAddr()}, "", tc.asked)
		if got := kz.SessionTimeout(); got != tc.granted {
			t.Errorf("asked for %v: SessionTimeout = %v, want the granted %v", tc.asked, got, tc.granted)
		}
		if err := kz.ConfirmSession(); err != nil {
			t.Errorf("asked for %v: ConfirmSession: %v", tc.asked, err)
		}
	}
}
