package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"

	"github.com/IBM/sarama"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite", pure Go
)

// schema is the sink's tables: one row per partition with the epoch and
// offset of the last write accepted; every message written, with the
// epoch and writer it was written under (duplicates stay visible); and
// every write refused for its epoch. See docs/fencing-tokens.md.
const schema = `
CREATE TABLE IF NOT EXISTS partitions (
	topic       TEXT    NOT NULL,
	partition   INTEGER NOT NULL,
	epoch       INTEGER NOT NULL,
	next_offset INTEGER NOT NULL,
	PRIMARY KEY (topic, partition)
);
CREATE TABLE IF NOT EXISTS processed (
	id        INTEGER PRIMARY KEY AUTOINCREMENT, -- commit order
	topic     TEXT    NOT NULL,
	partition INTEGER NOT NULL,
	offset    INTEGER NOT NULL,
	epoch     INTEGER NOT NULL,
	writer    TEXT    NOT NULL,
	value     BLOB
);
CREATE TABLE IF NOT EXISTS rejected (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	topic        TEXT    NOT NULL,
	partition    INTEGER NOT NULL,
	first_offset INTEGER NOT NULL,
	messages     INTEGER NOT NULL,
	epoch        INTEGER NOT NULL,
	stored_epoch INTEGER NOT NULL,
	writer       TEXT    NOT NULL
);`

// fencedUpsert writes a partition's row only if the epoch stored is not
// higher than the writer's: a row the write does not change means a
// newer owner wrote first.
const fencedUpsert = `
INSERT INTO partitions (topic, partition, epoch, next_offset) VALUES (?, ?, ?, ?)
ON CONFLICT (topic, partition) DO UPDATE
	SET epoch = excluded.epoch, next_offset = excluded.next_offset
	WHERE partitions.epoch <= excluded.epoch`

// uncheckedUpsert is fencedUpsert without the check, what a sink that
// ignores the fencing token does.
const uncheckedUpsert = `
INSERT INTO partitions (topic, partition, epoch, next_offset) VALUES (?, ?, ?, ?)
ON CONFLICT (topic, partition) DO UPDATE
	SET epoch = excluded.epoch, next_offset = excluded.next_offset`

// ErrFenced: the sink holds a higher epoch for the partition than the
// write's: a later owner wrote, and the write changed nothing.
var ErrFenced = errors.New("fencedsink: a newer owner of the partition wrote first")

// Sink writes processed messages to SQLite, each write fenced by the
// epoch of the claim the messages were delivered under.
type Sink struct {
	db      *sql.DB
	writer  string // recorded with each row: who wrote it
	checked bool   // false: the epoch is stored but not checked
}

// OpenSink opens (creating) the database at path for writer. checked
// false turns the epoch check off, to show what it prevents.
func OpenSink(path, writer string, checked bool) (*Sink, error) {
	// Writers in other processes wait for each other (busy_timeout), and
	// a transaction takes the write lock at its start (_txlock), so two
	// writers never deadlock upgrading their locks.
	dsn := "file:" + path + "?" + url.Values{
		"_pragma": {"busy_timeout(10000)", "journal_mode(WAL)"},
		"_txlock": {"immediate"},
	}.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(schema); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("fencedsink: create tables: %w", err)
	}
	return &Sink{db: db, writer: writer, checked: checked}, nil
}

// Close closes the database.
func (s *Sink) Close() error { return s.db.Close() }

// Write stores msgs, consecutive messages of one partition delivered under
// epoch, in one transaction: the partition's row moves to the offset
// after the last of them and to epoch, and each message gets a row in
// processed. If the partition's row holds a higher epoch (checked sinks
// only) nothing is written but a row in rejected, and the error is
// ErrFenced.
func (s *Sink) Write(ctx context.Context, epoch int64, msgs ...*sarama.ConsumerMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	first, last := msgs[0], msgs[len(msgs)-1]
	for _, m := range msgs {
		if m.Topic != first.Topic || m.Partition != first.Partition {
			return fmt.Errorf("fencedsink: one write takes one partition's messages: %s/%d and %s/%d",
				first.Topic, first.Partition, m.Topic, m.Partition)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // after Commit: a no-op
	upsert := fencedUpsert
	if !s.checked {
		upsert = uncheckedUpsert
	}
	res, err := tx.ExecContext(ctx, upsert, first.Topic, first.Partition, epoch, last.Offset+1)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return s.reject(ctx, tx, epoch, msgs)
	}
	for _, m := range msgs {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO processed (topic, partition, offset, epoch, writer, value) VALUES (?, ?, ?, ?, ?, ?)`,
			m.Topic, m.Partition, m.Offset, epoch, s.writer, m.Value); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// reject records a write refused for its epoch, in place of its
// messages, and returns ErrFenced.
func (s *Sink) reject(ctx context.Context, tx *sql.Tx, epoch int64, msgs []*sarama.ConsumerMessage) error {
	first := msgs[0]
	var stored int64
	if err := tx.QueryRowContext(ctx, `SELECT epoch FROM partitions WHERE topic = ? AND partition = ?`,
		first.Topic, first.Partition).Scan(&stored); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO rejected (topic, partition, first_offset, messages, epoch, stored_epoch, writer) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		first.Topic, first.Partition, first.Offset, len(msgs), epoch, stored, s.writer); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return fmt.Errorf("%w: %s/%d holds epoch %d, the write has %d", ErrFenced, first.Topic, first.Partition, stored, epoch)
}

// PartitionRow is what the sink holds for one partition.
type PartitionRow struct {
	Epoch      int64
	NextOffset int64
}

// Partition returns the partition's row; ok is false when none is stored.
func (s *Sink) Partition(ctx context.Context, topic string, partition int32) (row PartitionRow, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT epoch, next_offset FROM partitions WHERE topic = ? AND partition = ?`,
		topic, partition).Scan(&row.Epoch, &row.NextOffset)
	if errors.Is(err, sql.ErrNoRows) {
		return row, false, nil
	}
	return row, err == nil, err
}
