package kazoo

import (
	"encoding/json"
	"errors"
	"time"
)

// RegisterWhiteList registers the instance with a wildcard subscription to
// every topic whose whole name matches the regular expression regex, as
// Kafka's high-level consumer registered a whitelist: pattern "white_list"
// and the expression as the subscription's only key, with one stream. The
// expression is stored as given; readers (Kafka's consumer and package
// consumergroup) trim it, read commas as alternation, and drop spaces and
// surrounding quotes. See RegisterWithSubscription for the errors.
func (cgi *ConsumergroupInstance) RegisterWhiteList(regex string) error {
	data, err := whiteListRegistration(regex)
	if err != nil {
		return err
	}
	return cgi.RegisterWithSubscription(data)
}

func whiteListRegistration(regex string) ([]byte, error) {
	if regex == "" {
		return nil, errors.New("kazoo: RegisterWhiteList: empty expression")
	}
	return json.Marshal(&Registration{
		Pattern:      RegPatternWhiteList,
		Subscription: map[string]int{regex: 1},
		Timestamp:    time.Now().Unix(),
		Version:      RegDefaultVersion,
	})
}
