package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zkgroup/kafka/consumergroup"
)

// fixedState is a StateSource that reports one state.
type fixedState consumergroup.GroupState

func (s fixedState) State() consumergroup.GroupState { return consumergroup.GroupState(s) }

// get serves one /healthz request from src and returns the status and the
// decoded body.
func get(t *testing.T, src StateSource) (int, consumergroup.GroupState) {
	t.Helper()
	rec := httptest.NewRecorder()
	Healthz(src).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	var body consumergroup.GroupState
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	return rec.Code, body
}

func TestHealthzStatus(t *testing.T) {
	for _, tc := range []struct {
		name    string
		session consumergroup.SessionState
		want    int
	}{
		{"connected", consumergroup.SessionState{Status: "connected", Connected: true}, http.StatusOK},
		{"fenced", consumergroup.SessionState{Status: "connected", Connected: true, Fenced: true}, http.StatusServiceUnavailable},
		{"disconnected", consumergroup.SessionState{Status: "disconnected"}, http.StatusServiceUnavailable},
		{"closed", consumergroup.SessionState{Status: "closed"}, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := consumergroup.GroupState{Group: "g", InstanceID: "i", Session: tc.session,
				Partitions: []consumergroup.PartitionState{{Topic: "t", Partition: 1, Committed: 5, Lag: 2}}}
			code, body := get(t, fixedState(st))
			if code != tc.want {
				t.Errorf("status %d, want %d", code, tc.want)
			}
			if body.Group != "g" || body.Session != tc.session || len(body.Partitions) != 1 || body.Partitions[0].Lag != 2 {
				t.Errorf("body %+v, want the state served", body)
			}
		})
	}
}

// A HandlerGroup that runs no session is not healthy.
func TestHealthzHandlerGroupWithoutSession(t *testing.T) {
	g, err := consumergroup.NewConsumerGroup("g", []string{"127.0.0.1:1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, g); code != http.StatusServiceUnavailable || body.Session.Status != "none" {
		t.Errorf("status %d, session %+v; want 503, none", code, body.Session)
	}
}
