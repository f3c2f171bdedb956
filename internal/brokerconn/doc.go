// Package brokerconn dials the group's own broker connections: those the
// batch feed's fetch rounds and the Kafka offset store's commits use
// beside sarama's client. A Dialer dials the way sarama would (the
// configured proxy or a user's Dial, the Net dial settings) and keeps
// every socket it opened, so that CloseAll shuts them at once, even under
// a request in flight, instead of waiting out a read timeout. Config
// gives such a connection the client's settings, with metrics that are
// never unregistered, since sarama's own connections share them.
package brokerconn
