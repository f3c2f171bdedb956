// Command seccerts writes the certificates of the secure test stack
// (integration/stack.sh with STACK_SECURE=1) into a folder, as PEM files
// that ZooKeeper and Kafka read directly (keystore type PEM):
//
//	seccerts -dir DIR
//
//	ca.pem                  the stack's CA: the servers' and clients' trust store
//	server.pem              server key (PKCS#8) and certificate, for 127.0.0.1 and localhost
//	client-cert.pem         a client certificate signed by the CA
//	client-key.pem
//	rogue-ca.pem            a CA nobody trusts
//	rogue-client-cert.pem   a client certificate signed by the rogue CA
//	rogue-client-key.pem
//
// Keys are fresh RSA 2048 keys, made at every run; nothing is kept
// elsewhere. Existing files are left alone, so a restarted stack keeps its
// certificates.
package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"log"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

type issued struct {
	cert *x509.Certificate
	der  []byte
	key  *rsa.PrivateKey
}

func main() {
	dir := flag.String("dir", "", "folder to write the PEM files to")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("[seccerts] ")
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	if _, err := os.Stat(filepath.Join(*dir, "ca.pem")); err == nil {
		return
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		log.Fatal(err)
	}
	ca := must(issue(nil, "zkgroup test CA", true, nil, false))
	server := must(issue(ca, "zkgroup test server", false, []string{"127.0.0.1", "localhost"}, true))
	client := must(issue(ca, "zkgroup-client", false, nil, false))
	rogue := must(issue(nil, "rogue CA", true, nil, false))
	rogueClient := must(issue(rogue, "rogue-client", false, nil, false))

	write(*dir, "server.pem", keyPEM(server.key), certPEM(server.der))
	write(*dir, "client-cert.pem", certPEM(client.der))
	write(*dir, "client-key.pem", keyPEM(client.key))
	write(*dir, "rogue-ca.pem", certPEM(rogue.der))
	write(*dir, "rogue-client-cert.pem", certPEM(rogueClient.der))
	write(*dir, "rogue-client-key.pem", keyPEM(rogueClient.key))
	write(*dir, "ca.pem", certPEM(ca.der)) // last: its presence means done
	log.Printf("certificates written to %s", *dir)
}

func must(i *issued, err error) *issued {
	if err != nil {
		log.Fatal(err)
	}
	return i
}

// issue makes a key and a certificate for cn, signed by parent (self-signed
// when parent is nil).
func issue(parent *issued, cn string, isCA bool, hosts []string, server bool) (*issued, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"zkgroup tests"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(90 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	} else if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &issued{cert: cert, der: der, key: key}, nil
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyPEM(k *rsa.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		log.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func write(dir, name string, parts ...[]byte) {
	var all []byte
	for _, p := range parts {
		all = append(all, p...)
	}
	if err := os.WriteFile(filepath.Join(dir, name), all, 0o600); err != nil {
		log.Fatal(err)
	}
}
