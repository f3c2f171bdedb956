package fetch

import (
	"reflect"

	"github.com/IBM/sarama"
)

// Compacted empty batches: the cleaner can remove every record of a
// batch and keep the batch (an idempotent producer's last one). sarama's
// decoder drops such a batch from RecordsSet, and with it where it ends;
// it keeps that end in the block's unexported recordsNextOffset, the field
// its own partition consumer steps over empty batches with. The feed reads
// it the same way rather than fork sarama. See docs/batch-feed.md,
// "Compacted empty batches".

// emptyBatchesEnd returns the offset after the last record batch sarama
// decoded in block, empty ones included, and false when sarama recorded
// none (no batch in the answer, or a sarama without the field: the
// partition then falls back as before).
func emptyBatchesEnd(block *sarama.FetchResponseBlock) (int64, bool) {
	f := reflect.ValueOf(block).Elem().FieldByName("recordsNextOffset")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.Int64 {
		return 0, false
	}
	return f.Elem().Int(), true
}
