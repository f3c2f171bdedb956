package coord

import (
	"testing"
	"time"
)

func TestPokeNeverBlocks(t *testing.T) {
	wake := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 100; i++ {
			poke(wake)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("poke blocked with nobody reading")
	}
	if len(wake) != 1 {
		t.Fatal("100 pokes should leave exactly one wake-up")
	}
}
