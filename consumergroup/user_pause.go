package consumergroup

import "github.com/zkgroup/kafka/internal/offsets"

// pausePartitions pauses or resumes the listed partitions this instance
// consumes now (others are ignored, as sarama ignores them), and sarama's
// partition consumers of them.
func (cg *ConsumerGroup) pausePartitions(partitions map[string][]int32, paused bool) {
	for topic, ps := range partitions {
		for _, p := range ps {
			if o := cg.offsetManager.Lookup(offsets.TopicPartition{Topic: topic, Partition: p}); o != nil {
				o.Pause.Set(paused)
			}
		}
	}
	if paused {
		cg.consumer.Pause(partitions)
	} else {
		cg.consumer.Resume(partitions)
	}
}

// pauseAll pauses or resumes every partition this instance consumes now,
// and sarama's partition consumers.
func (cg *ConsumerGroup) pauseAll(paused bool) {
	for _, o := range cg.offsetManager.Snapshot() {
		o.Pause.Set(paused)
	}
	if paused {
		cg.consumer.PauseAll()
	} else {
		cg.consumer.ResumeAll()
	}
}
