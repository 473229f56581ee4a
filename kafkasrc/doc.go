// Package kafkasrc is mcptrace's Kafka client: membership of a consumer
// group, reading the partitions a generation assigns, and committing their
// offsets, with github.com/segmentio/kafka-go. It knows nothing of the
// pipeline: it hands over messages and commits what it is told.
//
// A Consumer joins the group (the range balancer only, so partition n of
// every topic goes to the same member: co-partitioned client and server
// topics meet in one consumer). Next returns each Generation: the
// assignment and the offsets the group had committed. Generation.Start
// reads each owned partition with a reader of its own from the position
// the caller gives (where its dataset is durable, or the group's commit,
// whichever is later), drops messages below it (kafka-go #1398), restarts
// a reader after an error or a stall (#955, #847, #387), and never
// commits on fetch. Done is closed when the generation ends (a rebalance,
// a lost coordinator); the generation cannot end on the broker's side
// until End is called, so the caller can make durable what is complete
// and Commit it with this generation's id first (the broker refuses a
// commit from an old generation: #1308). Commit never moves an offset
// backwards.
//
// Lag is computed per message (HighWater - Offset - 1): with a group,
// kafka-go's Reader.Lag is not available.
//
// security.go turns the TLS and SASL flags into a kafka-go Dialer.
package kafkasrc
