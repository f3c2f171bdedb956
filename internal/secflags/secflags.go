// Package secflags gives the command-line programs of this module (the
// examples, the stack's readiness check) one set of security flags: TLS
// to ZooKeeper, digest credentials for ZooKeeper, and TLS and SASL/SCRAM
// to Kafka through sarama.Config. Its SCRAM client is github.com/xdg-go/scram
// behind sarama's SCRAMClient interface (XDGSCRAMClient).
package secflags

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/kazoo"
)

// Flags are the parsed security flags.
type Flags struct {
	ZKTLSCA, ZKTLSCert, ZKTLSKey string
	ZKUser, ZKPasswordFile       string
	Listener                     string
	KafkaTLS                     bool
	KafkaTLSCA                   string
	SASLUser, SASLPasswordFile   string
	SASLMechanism                string
}

// Register defines the flags on fs.
func Register(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.ZKTLSCA, "zk-tls-ca", "", "PEM `file` of the CA that signed the ZooKeeper servers' certificates; enables TLS to ZooKeeper")
	fs.StringVar(&f.ZKTLSCert, "zk-tls-cert", "", "PEM `file` of the client certificate for ZooKeeper")
	fs.StringVar(&f.ZKTLSKey, "zk-tls-key", "", "PEM `file` of the client certificate's key")
	fs.StringVar(&f.ZKUser, "zk-user", "", "ZooKeeper digest `user` added to the session")
	fs.StringVar(&f.ZKPasswordFile, "zk-password-file", "", "`file` holding the ZooKeeper digest password")
	fs.StringVar(&f.Listener, "listener", "", "Kafka listener `name` whose broker addresses to use (default PLAINTEXT)")
	fs.BoolVar(&f.KafkaTLS, "kafka-tls", false, "connect to Kafka over TLS (implied by -kafka-tls-ca)")
	fs.StringVar(&f.KafkaTLSCA, "kafka-tls-ca", "", "PEM `file` of the CA that signed the brokers' certificates (default: the system's)")
	fs.StringVar(&f.SASLUser, "sasl-user", "", "Kafka SASL `user`")
	fs.StringVar(&f.SASLPasswordFile, "sasl-password-file", "", "`file` holding the Kafka SASL password")
	fs.StringVar(&f.SASLMechanism, "sasl-mechanism", sarama.SASLTypeSCRAMSHA512, "SASL `mechanism`: SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN")
	return f
}

// ZK returns a kazoo config with the ZooKeeper flags applied.
func (f *Flags) ZK() (*kazoo.Config, error) {
	conf := kazoo.NewConfig()
	return conf, f.ApplyZK(conf)
}

// ApplyZK applies the ZooKeeper flags to conf.
func (f *Flags) ApplyZK(conf *kazoo.Config) error {
	if f.Listener != "" {
		conf.Listener = f.Listener
	}
	if f.ZKTLSCA != "" || f.ZKTLSCert != "" {
		t, err := TLSConfig(f.ZKTLSCA, f.ZKTLSCert, f.ZKTLSKey)
		if err != nil {
			return fmt.Errorf("ZooKeeper TLS: %w", err)
		}
		conf.TLS = t
	}
	if f.ZKUser != "" {
		pw, err := readSecret(f.ZKPasswordFile)
		if err != nil {
			return fmt.Errorf("-zk-password-file: %w", err)
		}
		conf.Auth = []kazoo.Auth{kazoo.DigestAuth(f.ZKUser, pw)}
	}
	return nil
}

// ZKPassword returns the digest password of -zk-password-file.
func (f *Flags) ZKPassword() (string, error) { return readSecret(f.ZKPasswordFile) }

// Kafka applies the Kafka flags to cfg.
func (f *Flags) Kafka(cfg *sarama.Config) error {
	if f.KafkaTLS || f.KafkaTLSCA != "" {
		t, err := TLSConfig(f.KafkaTLSCA, "", "")
		if err != nil {
			return fmt.Errorf("Kafka TLS: %w", err)
		}
		cfg.Net.TLS.Enable = true
		cfg.Net.TLS.Config = t
	}
	if f.SASLUser != "" {
		pw, err := readSecret(f.SASLPasswordFile)
		if err != nil {
			return fmt.Errorf("-sasl-password-file: %w", err)
		}
		SASL(cfg, f.SASLMechanism, f.SASLUser, pw)
	}
	return nil
}

// SASL sets sarama's SASL settings for mechanism (SCRAM-SHA-512,
// SCRAM-SHA-256 or PLAIN).
func SASL(cfg *sarama.Config, mechanism, user, password string) {
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.User = user
	cfg.Net.SASL.Password = password
	cfg.Net.SASL.Mechanism = sarama.SASLMechanism(mechanism)
	switch cfg.Net.SASL.Mechanism {
	case sarama.SASLTypeSCRAMSHA512:
		cfg.Net.SASL.SCRAMClientGeneratorFunc = SCRAMSHA512
	case sarama.SASLTypeSCRAMSHA256:
		cfg.Net.SASL.SCRAMClientGeneratorFunc = SCRAMSHA256
	}
}

// TLSConfig builds a client TLS config trusting the CA in caFile (the
// system's CAs when "") and presenting the certificate in certFile/keyFile
// (none when both are "").
func TLSConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pemData, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemData) {
			return nil, fmt.Errorf("%s: no PEM certificate", caFile)
		}
		conf.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("a client certificate needs both its certificate and its key file")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

func readSecret(file string) (string, error) {
	if file == "" {
		return "", errors.New("no password file given")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
