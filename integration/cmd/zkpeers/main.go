// Command zkpeers runs the links between the servers of the test stack's
// ZooKeeper ensemble, so that tests can cut one server off from its peers
// while its clients stay connected (client ports are not proxied).
// integration/stack.sh starts it in ensemble mode:
//
//	zkpeers -cuts FILE -applied FILE kind:from:to:listenport:targetport ...
//
// Each link listens on 127.0.0.1:listenport for the connections server
// `from` opens to server `to` and forwards them to 127.0.0.1:targetport (the
// real quorum or election port of `to`). Server `from`'s configuration
// names the listen port as `to`'s address. An election link also rewrites
// the address `from` advertises in its first message to the listen port of
// the election link back from `to` (see rewriteInitial), so that no
// election connection bypasses the proxies.
//
// The cut file lists the servers that are cut off, one per line: "<id>" or
// "<id> silent|reset". A link is cut when either end is. A silent cut keeps
// connections established but discards every byte, so each server notices
// only through its own timeouts, as in a real partition; a reset cut closes
// every connection, so both sides notice at once. New connections on a cut
// link are held without a peer (silent) or closed (reset). When a server is
// healed, the connections that lost bytes are closed and the servers open
// fresh ones.
//
// zkpeers polls the cut file every 20 ms and, once the links follow it,
// writes the same content to the applied file: a writer waits for the two
// to match to know the cut is in force.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	cutsFile := flag.String("cuts", "", "file listing the cut servers (absent: none)")
	appliedFile := flag.String("applied", "", "file where the applied cut list is written")
	flag.String("label", "", "ignored; lets the stack script recognise its process")
	flag.Parse()
	log.SetFlags(log.Ldate | log.Ltime | log.Lmicroseconds)
	log.SetPrefix("[zkpeers] ")
	if *cutsFile == "" || *appliedFile == "" || flag.NArg() == 0 {
		log.Fatal("usage: zkpeers -cuts FILE -applied FILE kind:from:to:listenport:targetport ...")
	}

	var specs []linkSpec
	for _, a := range flag.Args() {
		s, err := parseLinkSpec(a)
		if err != nil {
			log.Fatal(err)
		}
		specs = append(specs, s)
	}
	var links []*link
	for _, s := range specs {
		l, err := newLink(s.name(), s.from, s.to, fmt.Sprintf("127.0.0.1:%d", s.listen),
			fmt.Sprintf("127.0.0.1:%d", s.target), advertised(specs, s))
		if err != nil {
			log.Fatalf("%s: %v", s.name(), err)
		}
		links = append(links, l)
	}
	log.Printf("%d links listening", len(links))

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last []byte
	first := true
	for {
		select {
		case s := <-stop:
			log.Printf("%v: closing", s)
			for _, l := range links {
				l.close()
			}
			return
		case <-tick.C:
		}
		text, err := os.ReadFile(*cutsFile)
		if err != nil && !os.IsNotExist(err) {
			log.Printf("read %s: %v", *cutsFile, err)
			continue
		}
		if !first && bytes.Equal(text, last) {
			continue
		}
		cuts, err := parseCuts(string(text))
		if err != nil {
			log.Printf("%s: %v (ignored)", *cutsFile, err)
			last, first = text, false
			continue
		}
		for _, l := range links {
			l.set(linkMode(cuts, l.from, l.to))
		}
		if err := writeAtomic(*appliedFile, text); err != nil {
			log.Printf("write %s: %v", *appliedFile, err)
			continue
		}
		log.Printf("cuts applied: %v", cuts)
		last, first = text, false
	}
}

// advertised is the election address server s.from must announce to
// s.to: the proxy of the link from s.to back to s.from, so that a
// connection s.to opens in answer goes through a proxy as well. It is ""
// for quorum links, which announce no address.
func advertised(specs []linkSpec, s linkSpec) string {
	if s.kind != "election" {
		return ""
	}
	for _, r := range specs {
		if r.kind == s.kind && r.from == s.to && r.to == s.from {
			return fmt.Sprintf("127.0.0.1:%d", r.listen)
		}
	}
	log.Fatalf("%s: no link back from %d to %d", s.name(), s.to, s.from)
	return ""
}

// writeAtomic replaces path with data, so a reader never sees a partial
// file.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".applied-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
