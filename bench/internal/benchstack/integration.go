package benchstack

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zkgroup/kafka/internal/testenv"
)

// Integration skips t under -short, and unless ZK_ADDR and KAFKA_ADDRS
// name the stack: a command's integration test needs both.
func Integration(t testing.TB) {
	t.Helper()
	testenv.Integration(t)
	for _, k := range []string{"ZK_ADDR", "KAFKA_ADDRS"} {
		if os.Getenv(k) == "" {
			t.Skip("integration test: " + k + " is not set (eval \"$(integration/stack.sh env)\")")
		}
	}
}

// BuildCommand builds the command in the test's directory into a
// temporary one and returns the binary's path.
func BuildCommand(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(wd))
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
