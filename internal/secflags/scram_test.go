package secflags

import (
	"errors"
	"testing"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"
)

// scramServer is xdg-go's server side, knowing one user whose credentials
// were derived from storedPassword exactly as given (no SASLprep), the way
// a broker stores them.
func scramServer(t *testing.T, hash scram.HashGeneratorFcn, user, storedPassword string) *scram.ServerConversation {
	t.Helper()
	derive, err := hash.NewClientUnprepped(user, storedPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	creds := derive.GetStoredCredentials(scram.KeyFactors{Salt: "0123456789abcdef", Iters: 4096})
	server, err := hash.NewServer(func(name string) (scram.StoredCredentials, error) {
		if name != user {
			return scram.StoredCredentials{}, errors.New("unknown user")
		}
		return creds, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return server.NewConversation()
}

// converse runs the conversation the way sarama does: Step until Done,
// each answer going to the server and the server's reply coming back.
func converse(client sarama.SCRAMClient, server *scram.ServerConversation, user, password string) error {
	if err := client.Begin(user, password, ""); err != nil {
		return err
	}
	challenge := ""
	for !client.Done() {
		answer, err := client.Step(challenge)
		if err != nil {
			return err
		}
		if client.Done() {
			break
		}
		if challenge, err = server.Step(answer); err != nil {
			return err
		}
	}
	if !server.Valid() {
		return errors.New("the server did not accept the client")
	}
	return nil
}

func TestSCRAMAuthenticates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client func() sarama.SCRAMClient
		hash   scram.HashGeneratorFcn
	}{
		{"SHA-512", SCRAMSHA512, scram.SHA512},
		{"SHA-256", SCRAMSHA256, scram.SHA256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := scramServer(t, tc.hash, "app", "s3cret=,pw")
			if err := converse(tc.client(), server, "app", "s3cret=,pw"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSCRAMRejectsWrongPassword(t *testing.T) {
	client := SCRAMSHA512()
	err := converse(client, scramServer(t, scram.SHA512, "app", "right"), "app", "wrong")
	if err == nil {
		t.Fatal("authenticated with a wrong password")
	}
	if client.Done() {
		t.Fatal("client done after a rejected proof")
	}
}

// TestSCRAMUsesPasswordAsKafkaStoresIt: a password with a no-break space
// (U+00A0) authenticates against credentials derived from it as typed, as
// Kafka's broker derives them (no SASLprep); a SASLprep'd client would send
// an ASCII space instead and be refused.
func TestSCRAMUsesPasswordAsKafkaStoresIt(t *testing.T) {
	server := scramServer(t, scram.SHA512, "app", "pass\u00a0word")
	if err := converse(SCRAMSHA512(), server, "app", "pass\u00a0word"); err != nil {
		t.Fatal(err)
	}
	server = scramServer(t, scram.SHA512, "app", "pass word")
	if err := converse(SCRAMSHA512(), server, "app", "pass\u00a0word"); err == nil {
		t.Fatal("a password was changed before hashing: Kafka would refuse it")
	}
}

// TestSCRAMRFC7677 runs the SCRAM-SHA-256 example conversation of RFC 7677,
// byte for byte, and checks a forged server signature is refused.
func TestSCRAMRFC7677(t *testing.T) {
	begin := func() *XDGSCRAMClient {
		c := &XDGSCRAMClient{hash: scram.SHA256, nonce: func() string { return "rOprNGfwEbeRWgbNEkqO" }}
		if err := c.Begin("user", "pencil", ""); err != nil {
			t.Fatal(err)
		}
		return c
	}
	const (
		serverFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
		clientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
		serverFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	)
	for _, tc := range []struct {
		serverFinal string
		wantOK      bool
	}{
		{serverFinal, true},
		{"v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", false},
	} {
		c := begin()
		if first, err := c.Step(""); err != nil || first != "n,,n=user,r=rOprNGfwEbeRWgbNEkqO" {
			t.Fatalf("client-first %q, %v", first, err)
		}
		if final, err := c.Step(serverFirst); err != nil || final != clientFinal {
			t.Fatalf("client-final\n got %q, %v\nwant %q", final, err, clientFinal)
		}
		if c.Done() {
			t.Fatal("done before the server was verified")
		}
		if _, err := c.Step(tc.serverFinal); (err == nil) != tc.wantOK {
			t.Fatalf("server-final %q: err %v; want accepted %v", tc.serverFinal, err, tc.wantOK)
		}
		if !c.Done() {
			t.Fatal("not done after the server's last message")
		}
	}
}

// TestSASLPicksTheMechanismsClient: the client SASL installs speaks the
// mechanism's hash, so it authenticates against that mechanism's server.
func TestSASLPicksTheMechanismsClient(t *testing.T) {
	for _, tc := range []struct {
		mechanism string
		hash      scram.HashGeneratorFcn
	}{
		{sarama.SASLTypeSCRAMSHA512, scram.SHA512},
		{sarama.SASLTypeSCRAMSHA256, scram.SHA256},
	} {
		cfg := sarama.NewConfig()
		SASL(cfg, tc.mechanism, "app", "pw")
		if cfg.Net.SASL.SCRAMClientGeneratorFunc == nil {
			t.Fatalf("%s: no SCRAM client", tc.mechanism)
		}
		server := scramServer(t, tc.hash, "app", "pw")
		if err := converse(cfg.Net.SASL.SCRAMClientGeneratorFunc(), server, cfg.Net.SASL.User, cfg.Net.SASL.Password); err != nil {
			t.Fatalf("%s: %v", tc.mechanism, err)
		}
	}
	cfg := sarama.NewConfig()
	SASL(cfg, sarama.SASLTypePlaintext, "app", "pw")
	if cfg.Net.SASL.SCRAMClientGeneratorFunc != nil {
		t.Fatal("PLAIN got a SCRAM client")
	}
}
