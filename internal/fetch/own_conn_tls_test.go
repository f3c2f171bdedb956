package fetch

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// selfSigned returns a server certificate for 127.0.0.1 and a pool that
// trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// Over TLS, the own connection's socket (whose TLS the capture dialer now
// sets up, in sarama's place) carries the fetchers' own requests, and the
// server name is checked as sarama checks it.
func TestOwnConnectionFetchesOverTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	broker := sarama.NewMockBrokerListener(t, 1, ln)
	defer broker.Close()
	mockFetchLeader(t, broker)
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.ApiVersionsRequest = false // the mock broker does not answer it
	conf.Net.TLS.Enable = true
	conf.Net.TLS.Config = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	f := newRoundFetcher(&env{config: &Config{Config: conf}, log: slog.New(slog.DiscardHandler)})
	f.own = newOwnConns(f.env)
	defer f.closeConns()
	conn, own := f.own.acquire(leaderWithID(broker.Addr(), broker.BrokerID()), false, false)
	if !own {
		t.Fatal("no own connection")
	}
	defer f.own.release(broker.BrokerID(), conn, false)
	r, err := f.send(conn, true, []*fetchWant{{ctx: context.Background(), topic: "t", partition: 0, offset: 0, size: 1 << 20, limit: 10}})
	if err != nil || r.decoded == nil {
		t.Fatalf("fetch over TLS: %v (decoded here: %v)", err, r.decoded != nil)
	}
	if p := r.decoded.partition("t", 0); p == nil || p.hwm != 1 {
		t.Fatalf("answer %+v", p)
	}
}

// leaderWithID returns a broker at addr with id.
func leaderWithID(addr string, id int32) *sarama.Broker {
	var md sarama.MetadataResponse
	md.AddBroker(addr, id)
	return md.Brokers[0]
}
