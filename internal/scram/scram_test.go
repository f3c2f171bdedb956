package scram

import "testing"

// TestRFC7677 runs the SCRAM-SHA-256 example conversation of RFC 7677.
func TestRFC7677(t *testing.T) {
	c := SHA256().(*Client)
	if err := c.Begin("user", "pencil", ""); err != nil {
		t.Fatal(err)
	}
	c.nonce = "rOprNGfwEbeRWgbNEkqO"
	first, err := c.Step("")
	if err != nil || first != "n,,n=user,r=rOprNGfwEbeRWgbNEkqO" {
		t.Fatalf("client-first %q, %v", first, err)
	}
	final, err := c.Step("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
	want := "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	if err != nil || final != want {
		t.Fatalf("client-final\n got %q, %v\nwant %q", final, err, want)
	}
	if c.Done() {
		t.Fatal("done before the server was verified")
	}
	if _, err := c.Step("v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="); err == nil {
		t.Fatal("a wrong server signature was accepted")
	}
	c.step = 2
	if _, err := c.Step("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="); err != nil || !c.Done() {
		t.Fatalf("server-final: %v, done %v", err, c.Done())
	}
}

// TestServerNonceMustExtendClients rejects a server that does not echo the
// client's nonce.
func TestServerNonceMustExtendClients(t *testing.T) {
	c := SHA512().(*Client)
	_ = c.Begin("u", "p", "")
	_, _ = c.Step("")
	if _, err := c.Step("r=other,s=AAAA,i=4096"); err == nil {
		t.Fatal("accepted a foreign nonce")
	}
}

func TestEscape(t *testing.T) {
	if got := escape("a=b,c"); got != "a=3Db=2Cc" {
		t.Fatalf("escape: %q", got)
	}
}
