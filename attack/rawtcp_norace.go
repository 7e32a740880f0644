//go:build !race

package attack

// rawTCPOn: the clients use rawTCP where it exists (rawtcp_linux.go).
const rawTCPOn = true
