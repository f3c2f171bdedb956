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

// XDGSCRAMClient is sarama's SCRAMClient on github.com/xdg-go/scram: one
// conversation per connection. The password is used as Kafka's own client
// and broker use it, its UTF-8 bytes as given: Kafka hashes credentials
// without SASLprep (RFC 4013), so a client that prepared the password
// would fail to log in with any password SASLprep changes (a no-break
// space, say) that kafka-configs stored as typed. See docs/security.md.
type XDGSCRAMClient struct {
	hash  scram.HashGeneratorFcn
	nonce scram.NonceGeneratorFcn // nil: xdg-go's random nonce; tests fix it
	conv  *scram.ClientConversation
}

// Begin starts a conversation for this user.
func (c *XDGSCRAMClient) Begin(userName, password, authzID string) error {
	client, err := c.hash.NewClientUnprepped(userName, password, authzID)
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
