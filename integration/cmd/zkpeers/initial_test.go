package main

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func initialMessage(version, sid int64, addr string, tail string) []byte {
	var b []byte
	b = binary.BigEndian.AppendUint64(b, uint64(version))
	b = binary.BigEndian.AppendUint64(b, uint64(sid))
	b = binary.BigEndian.AppendUint32(b, uint32(len(addr)))
	b = append(b, addr...)
	return append(b, tail...)
}

func TestRewriteInitialReplacesTheAdvertisedAddress(t *testing.T) {
	for _, v := range []int64{electionProtocolV1, electionProtocolV2} {
		src := bytes.NewReader(initialMessage(v, 2, "127.0.0.1:3284", "notification"))
		var dst bytes.Buffer
		sid, was, err := rewriteInitial(src, &dst, "127.0.0.1:3299")
		if err != nil || sid != 2 || was != "127.0.0.1:3284" {
			t.Fatalf("version %d: sid %d, was %q, err %v", v, sid, was, err)
		}
		if want := initialMessage(v, 2, "127.0.0.1:3299", ""); !bytes.Equal(dst.Bytes(), want) {
			t.Fatalf("version %d: wrote %x, want %x", v, dst.Bytes(), want)
		}
		// What follows the initial message is left for the caller to copy.
		rest := make([]byte, 32)
		n, _ := src.Read(rest)
		if string(rest[:n]) != "notification" {
			t.Fatalf("version %d: left %q unread, want the notification", v, rest[:n])
		}
	}
}

func TestRewriteInitialPassesAnOldStreamThrough(t *testing.T) {
	var msg []byte
	msg = binary.BigEndian.AppendUint64(msg, 3) // an old server sends only its id
	var dst bytes.Buffer
	sid, _, err := rewriteInitial(bytes.NewReader(msg), &dst, "127.0.0.1:1")
	if err != nil || sid != -1 || !bytes.Equal(dst.Bytes(), msg) {
		t.Fatalf("sid %d, err %v, wrote %x; want the id passed through", sid, err, dst.Bytes())
	}
}

func TestRewriteInitialRejectsABadLength(t *testing.T) {
	msg := initialMessage(electionProtocolV2, 1, "", "")
	if _, _, err := rewriteInitial(bytes.NewReader(msg), &bytes.Buffer{}, "x"); err == nil {
		t.Fatal("an empty address was accepted")
	}
}
