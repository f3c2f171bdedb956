// Package scram is a SCRAM client (RFC 5802) for sarama's SASL/SCRAM
// mechanisms, enough for the tests and example programs of this module to
// authenticate to Kafka with SCRAM-SHA-256 or SCRAM-SHA-512. Applications
// usually plug in github.com/xdg-go/scram, as sarama's own examples do;
// this package avoids the dependency.
//
//	cfg.Net.SASL.Enable = true
//	cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
//	cfg.Net.SASL.SCRAMClientGeneratorFunc = scram.SHA512
package scram

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"

	"github.com/IBM/sarama"
)

// SHA256 returns a new client for SCRAM-SHA-256.
func SHA256() sarama.SCRAMClient { return &Client{hash: sha256.New} }

// SHA512 returns a new client for SCRAM-SHA-512.
func SHA512() sarama.SCRAMClient { return &Client{hash: sha512.New} }

// Client runs one SCRAM conversation; sarama makes one per connection.
type Client struct {
	hash func() hash.Hash

	user, password, authzID string
	nonce                   string
	clientFirstBare         string
	serverSignature         []byte
	step                    int
	done                    bool
}

// Begin starts a conversation for this user.
func (c *Client) Begin(userName, password, authzID string) error {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	c.user, c.password, c.authzID = userName, password, authzID
	c.nonce = base64.RawStdEncoding.EncodeToString(b[:])
	c.step, c.done = 0, false
	return nil
}

// Step answers the server's last message ("" before the first).
func (c *Client) Step(challenge string) (string, error) {
	c.step++
	switch c.step {
	case 1:
		c.clientFirstBare = "n=" + escape(c.user) + ",r=" + c.nonce
		return c.gs2Header() + c.clientFirstBare, nil
	case 2:
		return c.clientFinal(challenge)
	case 3:
		return "", c.verifyServer(challenge)
	}
	return "", errors.New("scram: conversation already finished")
}

// Done reports whether the server has been verified.
func (c *Client) Done() bool { return c.done }

func (c *Client) gs2Header() string {
	if c.authzID == "" {
		return "n,,"
	}
	return "n,a=" + escape(c.authzID) + ","
}

func (c *Client) clientFinal(serverFirst string) (string, error) {
	attrs := parse(serverFirst)
	nonce, salt64, iters := attrs["r"], attrs["s"], attrs["i"]
	if e, ok := attrs["e"]; ok {
		return "", fmt.Errorf("scram: server error %q", e)
	}
	if !strings.HasPrefix(nonce, c.nonce) || len(nonce) == len(c.nonce) {
		return "", errors.New("scram: server nonce does not extend the client's")
	}
	salt, err := base64.StdEncoding.DecodeString(salt64)
	if err != nil {
		return "", fmt.Errorf("scram: salt: %w", err)
	}
	n, err := strconv.Atoi(iters)
	if err != nil || n < 1 {
		return "", fmt.Errorf("scram: iteration count %q", iters)
	}
	salted, err := pbkdf2.Key(c.hash, c.password, salt, n, c.hash().Size())
	if err != nil {
		return "", err
	}
	withoutProof := "c=" + base64.StdEncoding.EncodeToString([]byte(c.gs2Header())) + ",r=" + nonce
	authMessage := []byte(c.clientFirstBare + "," + serverFirst + "," + withoutProof)

	clientKey := c.mac(salted, []byte("Client Key"))
	h := c.hash()
	h.Write(clientKey)
	storedKey := h.Sum(nil)
	proof := c.mac(storedKey, authMessage)
	for i := range proof {
		proof[i] ^= clientKey[i]
	}
	c.serverSignature = c.mac(c.mac(salted, []byte("Server Key")), authMessage)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
}

func (c *Client) verifyServer(serverFinal string) error {
	attrs := parse(serverFinal)
	if e, ok := attrs["e"]; ok {
		return fmt.Errorf("scram: server error %q", e)
	}
	sig, err := base64.StdEncoding.DecodeString(attrs["v"])
	if err != nil || subtle.ConstantTimeCompare(sig, c.serverSignature) != 1 {
		return errors.New("scram: the server's signature does not verify")
	}
	c.done = true
	return nil
}

func (c *Client) mac(key, msg []byte) []byte {
	m := hmac.New(c.hash, key)
	m.Write(msg)
	return m.Sum(nil)
}

func parse(msg string) map[string]string {
	out := make(map[string]string)
	for _, kv := range strings.Split(msg, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && len(k) == 1 {
			out[k] = v
		}
	}
	return out
}

// escape encodes a name as RFC 5802's saslname.
func escape(s string) string {
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s)
}
