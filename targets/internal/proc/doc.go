// Package proc is what a runner of a real server (targets/nginx,
// targets/haproxy) needs from the operating system: find the binary, start
// it as a child in a process group of its own that the kernel stops if
// ratecheck dies, wait until it answers, stop it (SIGTERM, then SIGKILL)
// and wait until its whole group is gone, pick loopback ports (retrying
// when another process takes one first), and a tiny loopback backend that
// answers 200 "ok\n" behind the server. What to generate, how to check a
// configuration and how to tell "ready" are the runner's.
package proc
