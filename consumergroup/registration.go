package consumergroup

import (
	"encoding/json"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// registration is this instance's registration JSON, as kazoo's Register
// and RegisterWhiteList write it (a static topic list, or the white
// list's expression, one stream each), plus the assignment strategies it
// offers ("assignment": ["sticky"] under StrategySticky), which upstream
// and Kafka's tools ignore. The group uses StrategySticky only while every
// registration offers it; see docs/assignment.md.
func (cg *ConsumerGroup) registration() ([]byte, error) {
	reg := kazoo.Registration{
		Pattern:      kazoo.RegPatternStatic,
		Subscription: make(map[string]int, len(cg.topics)),
		Timestamp:    time.Now().Unix(),
		Version:      kazoo.RegDefaultVersion,
		Assignment:   cg.config.Assignment.Strategy.Offered(),
	}
	if cg.filter != nil {
		reg.Pattern = kazoo.RegPatternWhiteList
		reg.Subscription[cg.filter.String()] = 1
	} else {
		for _, topic := range cg.topics {
			reg.Subscription[topic] = 1
		}
	}
	return json.Marshal(&reg)
}
