// Package results is the record of a run: what every request did
// (Result), the JSON Lines stream a run writes as results arrive and its
// reader (stream.go, streamline.go, reader.go), the HDR aggregates
// (metrics.go), what each attack profile concluded (profile_metrics.go
// and one metrics_*.go per profile, with the table and verdict drawn from
// them), and the shards of one run merged back into one (shard.go,
// merge.go, merge_verdict.go).
//
// It sits below the load generator: package attack writes this record,
// and grade, report and probe/expect read it without importing the engine.
// It reads no clock and opens no socket; it only records and computes.
package results
