//go:build race

package attack

// rawTCPOn: under the race detector the clients use net's own connections
// (see rawTCP).
const rawTCPOn = false
