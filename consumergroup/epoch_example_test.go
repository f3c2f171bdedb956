package consumergroup_test

import (
	"context"
	"database/sql"
	"log"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
)

// fencedWrite is a sink's write of one message, refused when a later
// owner of the partition has written: the row's epoch only grows. See
// docs/fencing-tokens.md and examples/fencedsink.
func fencedWrite(db *sql.DB, epoch int64, msg *sarama.ConsumerMessage) (written bool, err error) {
	tx, err := db.Begin()
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	res, err := tx.Exec(`UPDATE partitions SET epoch = ?, next_offset = ?
		WHERE topic = ? AND partition = ? AND epoch <= ?`,
		epoch, msg.Offset+1, msg.Topic, msg.Partition, epoch)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err // a later owner wrote first
	}
	if _, err := tx.Exec(`INSERT INTO results (topic, partition, offset, value) VALUES (?, ?, ?, ?)`,
		msg.Topic, msg.Partition, msg.Offset, msg.Value); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// fencedHandler writes each message of a claim under the claim's epoch.
type fencedHandler struct{ db *sql.DB }

// Setup runs once per session, before any claim delivers.
func (fencedHandler) Setup(sarama.ConsumerGroupSession) error { return nil }

// Cleanup runs once per session, after every ConsumeClaim returned.
func (fencedHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

// ConsumeClaim takes the claim's fencing token once: every message of the
// claim came under it.
func (h fencedHandler) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	epoch, ok := consumergroup.ClaimEpoch(claim)
	if !ok {
		log.Fatal("not a HandlerGroup's claim")
	}
	for msg := range claim.Messages() {
		written, err := fencedWrite(h.db, epoch, msg)
		if err != nil {
			return err
		}
		if !written {
			return nil // a later owner took the partition: stop writing it
		}
		session.MarkMessage(msg, "")
	}
	return nil
}

// A handler stamps its writes with its claim's epoch, and the sink refuses
// a write whose epoch is lower than the one it stored for the partition:
// an instance cut off while it still processes cannot write after its
// successor did.
func ExampleClaimEpoch() {
	var db *sql.DB // opened with a driver of your choice; a row per partition
	group, err := consumergroup.NewConsumerGroup("my-group", []string{"127.0.0.1:2181"}, consumergroup.NewConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer group.Close()
	_ = group.Consume(context.Background(), []string{"my-topic"}, fencedHandler{db})
}

// With Messages(), take each message's token when it arrives: the epoch of
// the claim that delivered it. Once that claim has ended ok is false, and
// the partition's next owner delivers the message again.
func ExampleConsumerGroup_MessageEpoch() {
	var db *sql.DB // opened with a driver of your choice; a row per partition
	group, err := consumergroup.JoinConsumerGroup("my-group", []string{"my-topic"}, []string{"127.0.0.1:2181"}, consumergroup.NewConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer group.Close()
	for msg := range group.Messages() {
		epoch, ok := group.MessageEpoch(msg)
		if !ok {
			continue // its claim has ended
		}
		if written, err := fencedWrite(db, epoch, msg); err != nil {
			log.Fatal(err)
		} else if written {
			group.CommitUpto(msg)
		}
	}
}
