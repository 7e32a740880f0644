// Package results is the record of a run: what every request did
// (Result), the stream a run writes as results arrive — JSON Lines or
// compact, by its name (format.go) — and its reader for either
// (stream.go, reader.go and the jsonl_* and compact_* files), an attack's
// stream aggregated in bounded memory (digest.go), the HDR aggregates
// (metrics.go), what each attack profile concluded (profile_metrics.go
// and one metrics_*.go per profile, with the table and verdict drawn from
// them), and the shards of one run merged back into one (shard.go,
// merge.go, merge_verdict.go).
//
// It sits below the load generator: package attack writes this record,
// and grade, report and probe/expect read it without importing the engine.
// It reads no clock and opens no socket; it only records and computes.
package results
