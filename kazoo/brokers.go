package kazoo

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Endpoint is one listener of a broker, parsed from "NAME://host:port".
type Endpoint struct {
	Listener string // listener name, upper case: "PLAINTEXT", "INTERNAL", ...
	Host     string
	Port     int
}

// Address returns "host:port" (IPv6 hosts in brackets).
func (e Endpoint) Address() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// BrokerRegistration is the JSON a Kafka broker writes to /brokers/ids/<id>.
type BrokerRegistration struct {
	ID        int32
	Host      string // legacy field: empty when PLAINTEXT is not a listener
	Port      int    // legacy field: -1 or 0 when PLAINTEXT is not a listener
	Endpoints []Endpoint
	// ListenerSecurityProtocolMap maps listener names to security protocols.
	ListenerSecurityProtocolMap map[string]string
	JMXPort                     int
	Rack                        string
	Version                     int
	Timestamp                   string
}

type brokerJSON struct {
	Host        string            `json:"host"`
	Port        int               `json:"port"`
	Endpoints   []string          `json:"endpoints"`
	ProtocolMap map[string]string `json:"listener_security_protocol_map"`
	JMXPort     int               `json:"jmx_port"`
	Rack        string            `json:"rack"`
	Version     int               `json:"version"`
	Timestamp   string            `json:"timestamp"`
}

// ParseBrokerRegistration parses a broker registration. path only names the
// znode in errors; every error wraps ErrMalformed.
func ParseBrokerRegistration(path string, id int32, data []byte) (*BrokerRegistration, error) {
	var j brokerJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, malformed(path, "broker registration is not valid JSON: %v", err)
	}
	b := &BrokerRegistration{
		ID: id, Host: j.Host, Port: j.Port, ListenerSecurityProtocolMap: j.ProtocolMap,
		JMXPort: j.JMXPort, Rack: j.Rack, Version: j.Version, Timestamp: j.Timestamp,
	}
	for _, raw := range j.Endpoints {
		ep, err := parseEndpoint(raw)
		if err != nil {
			return nil, malformed(path, "endpoint %q: %v", raw, err)
		}
		b.Endpoints = append(b.Endpoints, ep)
	}
	if len(b.Endpoints) == 0 && (b.Host == "" || b.Port <= 0) {
		return nil, malformed(path, "broker registration has neither endpoints nor host and port")
	}
	return b, nil
}

func parseEndpoint(s string) (Endpoint, error) {
	name, hostport, ok := strings.Cut(s, "://")
	if !ok || name == "" {
		return Endpoint{}, errors.New(`want "LISTENER://host:port"`)
	}
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		return Endpoint{}, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port <= 0 || port > 65535 {
		return Endpoint{}, fmt.Errorf("invalid port %q", portStr)
	}
	return Endpoint{Listener: strings.ToUpper(name), Host: host, Port: port}, nil
}

// Address picks the broker's address for a listener name, in this order:
// the endpoint of that listener; the legacy host/port fields (Kafka fills
// them only for a PLAINTEXT listener); the first endpoint whose listener
// uses the security protocol of that name; the first endpoint.
func (b *BrokerRegistration) Address(listener string) string {
	listener = strings.ToUpper(listener)
	for _, e := range b.Endpoints {
		if e.Listener == listener {
			return e.Address()
		}
	}
	if b.Host != "" && b.Port > 0 {
		return net.JoinHostPort(b.Host, strconv.Itoa(b.Port))
	}
	for _, e := range b.Endpoints {
		if strings.EqualFold(b.ListenerSecurityProtocolMap[e.Listener], listener) {
			return e.Address()
		}
	}
	return b.Endpoints[0].Address()
}

// BrokerRegistrations returns the parsed registration of every live broker.
func (kz *Kazoo) BrokerRegistrations() (map[int32]*BrokerRegistration, error) {
	root := kz.brokersIDsPath()
	children, err := kz.children(root)
	if err != nil {
		return nil, err
	}
	result := make(map[int32]*BrokerRegistration, len(children))
	for _, child := range children {
		p := kz.brokerPath(child)
		id, err := strconv.ParseInt(child, 10, 32)
		if err != nil {
			return nil, malformed(p, "broker id %q is not a 32-bit integer", child)
		}
		data, _, err := kz.get(p)
		if errors.Is(err, ErrNoNode) {
			continue // the broker went away between the listing and the read
		} else if err != nil {
			return nil, err
		}
		b, err := ParseBrokerRegistration(p, int32(id), data)
		if err != nil {
			return nil, err
		}
		result[int32(id)] = b
	}
	return result, nil
}

// Brokers returns the address of every live broker, keyed by broker id, for
// the listener named by Config.Listener (see BrokerRegistration.Address).
func (kz *Kazoo) Brokers() (map[int32]string, error) {
	return kz.SpecificBrokers(kz.conf.Listener)
}

// SpecificBrokers is Brokers for the named listener ("PLAINTEXT",
// "EXTERNAL", ...).
func (kz *Kazoo) SpecificBrokers(listener string) (map[int32]string, error) {
	regs, err := kz.BrokerRegistrations()
	if err != nil {
		return nil, err
	}
	result := make(map[int32]string, len(regs))
	for id, b := range regs {
		result[id] = b.Address(listener)
	}
	return result, nil
}

// BrokerList returns the broker addresses, ordered by broker id, ready for
// sarama.NewClient and friends.
func (kz *Kazoo) BrokerList() ([]string, error) {
	return kz.SpecificBrokerList(kz.conf.Listener)
}

// SpecificBrokerList is BrokerList for the named listener.
func (kz *Kazoo) SpecificBrokerList(listener string) ([]string, error) {
	brokers, err := kz.SpecificBrokers(listener)
	if err != nil {
		return nil, err
	}
	ids := sortedIDs(brokers)
	result := make([]string, len(ids))
	for i, id := range ids {
		result[i] = brokers[id]
	}
	return result, nil
}

// SpecificbrokerIDList returns the sorted ids of the brokers that have an
// address for the listener. The odd capitalisation is kazoo-go's.
func (kz *Kazoo) SpecificbrokerIDList(listener string) ([]int32, error) {
	brokers, err := kz.SpecificBrokers(listener)
	if err != nil {
		return nil, err
	}
	return sortedIDs(brokers), nil
}

func (kz *Kazoo) brokerIDList() ([]int32, error) {
	return kz.SpecificbrokerIDList(kz.conf.Listener)
}

func sortedIDs(m map[int32]string) []int32 {
	ids := make([]int32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Controller returns the id of the broker acting as the cluster's controller.
func (kz *Kazoo) Controller() (int32, error) {
	p := kz.controllerPath()
	data, _, err := kz.get(p)
	if err != nil {
		return -1, err
	}
	var c struct {
		BrokerID *int32 `json:"brokerid"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return -1, malformed(p, "controller is not valid JSON: %v", err)
	}
	if c.BrokerID == nil {
		return -1, malformed(p, "controller has no brokerid")
	}
	return *c.BrokerID, nil
}
