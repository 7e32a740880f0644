// Package corpus is ratecheck's real-world corpus: rate limiters written by
// other people — Go libraries from the module proxy and HAProxy from its
// Debian package — each started on 127.0.0.1 with parameters and a ground
// truth read from the library's own source code, for `probe` to name.
//
// It is a module of its own, so that the libraries it exercises never enter
// ratecheck's go.mod. `go test -v ./...` in this directory probes every
// entry (about a minute and a half) and prints truth against inference. An
// entry whose behaviour lies inside the
// probe's model space must be named with its family right unless the probe
// called its answer a toss-up (confidence under 0.5), and nine in ten with
// their parameters within the accuracy bars of probe/selftest; one whose behaviour does not (a pacer, a counter
// that counts denied attempts, interval refill, a grid anchored at the key's
// creation) must at least not be named wrong with confidence ≥ 0.8.
package corpus
