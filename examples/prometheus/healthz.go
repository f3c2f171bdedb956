package main

import (
	"encoding/json"
	"net/http"

	"github.com/zkgroup/kafka/consumergroup"
)

// StateSource is a member that reports its state: *consumergroup.ConsumerGroup
// and *consumergroup.HandlerGroup are.
type StateSource interface {
	State() consumergroup.GroupState
}

// Healthz serves src's State as JSON: 200 while its ZooKeeper session is
// connected and not fenced (it can deliver), 503 otherwise (cut off from
// ZooKeeper, fenced, closed, or a HandlerGroup between sessions).
func Healthz(src StateSource) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		st := src.State()
		code := http.StatusOK
		if !st.Session.Healthy() {
			code = http.StatusServiceUnavailable
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(st)
	})
}
