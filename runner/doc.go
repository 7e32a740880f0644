// Package runner carries out what a command asked for, between its flags
// and its exit code: it opens the targets, runs each experiment in turn
// and turns what came back into the report's runs — an attack profile's
// run (attack.go), a probe run and graded (probe.go), check's endpoints
// probed and held to their expectations (check.go), compare's targets
// given one experiment each (compare.go), recorded streams read back,
// inferred and graded again, or converted to JSON Lines (recorded.go),
// the demo and the simulation sweep (selftest.go).
//
// Its errors say what kind of end each is (errors.go): refused, failed or
// untested, which cmd maps to exit codes; messages name the user's flags
// as the request's attack.Options.Names does.
package runner
