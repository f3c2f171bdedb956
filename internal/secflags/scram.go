package secflags

import (
	"crypto/sha256"
	"crypto/sha512"
	"fmt"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"
)

// SCRAMSHA256 returns a new SCRAM-SHA-256 client, for sarama's
// Net.SASL.SCRAMClientGeneratorFunc.
func SCRAMSHA256() sarama.SCRAMClient { return &XDGSCRAMClient{hash: sha256.New} }

// SCRAMSHA512 returns a new SCRAM-SHA-512 client, for sarama's
// Net.SASL.SCRAMClientGeneratorFunc.
func SCRAMSHA512() sarama.SCRAMClient { return &XDGSCRAMClient{hash: sha512.New} }

// XDGSCRAMClient is sarama's SCRAMClient on github.com/xdg-go/scram, as
// sarama's own examples build it: one conversation per connection, with
// the user name and password prepared by SASLprep (RFC 4013) as RFC 5802
// asks. Kafka's broker hashes the password's UTF-8 bytes as given, so the
// two agree for every password SASLprep leaves unchanged (printable ASCII
// among them).
type XDGSCRAMClient struct {
	hash  scram.HashGeneratorFcn
	nonce scram.NonceGeneratorFcn // nil: xdg-go's random nonce; tests fix it
	conv  *scram.ClientConversation
}

// Begin starts a conversation for this user; it fails if SASLprep
// rejects the user name or the password.
func (c *XDGSCRAMClient) Begin(userName, password, authzID string) error {
	client, err := c.hash.NewClient(userName, password, authzID)
	if err != nil {
		return fmt.Errorf("scram: %w", err)
	}
	if c.nonce != nil {
		client = client.WithNonceGenerator(c.nonce)
	}
	c.conv = client.NewConversation()
	return nil
}

// Step answers the server's last message ("" before the first).
func (c *XDGSCRAMClient) Step(challenge string) (string, error) {
	return c.conv.Step(challenge)
}

// Done reports whether the conversation is over; the last Step's error
// says whether the server's signature verified.
func (c *XDGSCRAMClient) Done() bool { return c.conv.Done() }
