package integration

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/secflags"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// secureStack is the secure mode of the local stack (STACK_SECURE=1, see
// integration/stack.sh and integration/secure-tests.sh): ZooKeeper's TLS
// port, the brokers' SASL_SSL listener, the certificates and the SCRAM
// user. ZK_ADDR and KAFKA_ADDRS still name the plain ports, which the
// tests' observers and producers use.
type secureStack struct {
	zkTLS     string // ZK_TLS_ADDR
	kafkaSSL  []string
	dir       string // SECURE_DIR: the PEM files and the SCRAM password
	scramUser string
	scramPass string
}

// secureEnv skips t unless the secure stack runs, and describes it.
func secureEnv(t testing.TB) *secureStack {
	t.Helper()
	testenv.Integration(t)
	if os.Getenv("STACK_SECURE") != "1" {
		t.Skip("secure stack test: needs STACK_SECURE=1 and the stack in secure mode (run integration/secure-tests.sh)")
	}
	s := &secureStack{
		zkTLS:     os.Getenv("ZK_TLS_ADDR"),
		kafkaSSL:  strings.Split(os.Getenv("KAFKA_SSL_ADDRS"), ","),
		dir:       os.Getenv("SECURE_DIR"),
		scramUser: os.Getenv("SCRAM_USER"),
	}
	if s.zkTLS == "" || s.dir == "" || s.scramUser == "" {
		t.Fatal("STACK_SECURE=1 needs ZK_TLS_ADDR, KAFKA_SSL_ADDRS, SECURE_DIR and SCRAM_USER (integration/stack.sh env prints them)")
	}
	pw, err := os.ReadFile(filepath.Join(s.dir, "scram.password"))
	if err != nil {
		t.Fatal(err)
	}
	s.scramPass = strings.TrimSpace(string(pw))
	return s
}

// tls builds a client TLS config from the stack's PEM files (names in
// SECURE_DIR; "" for none).
func (s *secureStack) tls(t testing.TB, ca, cert, key string) *tls.Config {
	t.Helper()
	p := func(n string) string {
		if n == "" {
			return ""
		}
		return filepath.Join(s.dir, n)
	}
	c, err := secflags.TLSConfig(p(ca), p(cert), p(key))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// zkClientTLS is a valid client's TLS config for ZooKeeper.
func (s *secureStack) zkClientTLS(t testing.TB) *tls.Config {
	return s.tls(t, "ca.pem", "client-cert.pem", "client-key.pem")
}

// kafka sets TLS (trusting the stack's CA) and SCRAM-SHA-512 on cfg.
func (s *secureStack) kafka(t testing.TB, cfg *sarama.Config) {
	cfg.Net.TLS.Enable = true
	cfg.Net.TLS.Config = s.tls(t, "ca.pem", "", "")
	secflags.SASL(cfg, sarama.SASLTypeSCRAMSHA512, s.scramUser, s.scramPass)
}

// groupConfig is testConfig over TLS + SCRAM to Kafka (the SASL_SSL
// listener) and TLS to ZooKeeper, with the group protected by the digest
// credentials user/password and the recommended ACL.
func (s *secureStack) groupConfig(t testing.TB, user, password string) *consumergroup.Config {
	cfg := testConfig()
	s.kafka(t, cfg.Config)
	cfg.Zookeeper.TLS = s.zkClientTLS(t)
	cfg.Zookeeper.Listener = "SASL_SSL"
	cfg.Zookeeper.Auth = []kazoo.Auth{kazoo.DigestAuth(user, password)}
	cfg.Zookeeper.ACL = kazoo.GroupACL(user, password)
	return cfg
}

// connectSecureZK opens a kazoo connection to the TLS port with conf.
func connectSecureZK(t testing.TB, s *secureStack, conf *kazoo.Config) *kazoo.Kazoo {
	t.Helper()
	kz, err := kazoo.NewKazoo([]string{s.zkTLS}, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kz.Close() })
	return kz
}

func randomPassword() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
