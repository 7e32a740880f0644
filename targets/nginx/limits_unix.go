//go:build unix

package nginx

import "syscall"

// fileLimits returns worker_rlimit_nofile and worker_connections for
// generated configs: enough descriptors for a load test when the hard limit
// allows, nginx's defaults otherwise.
func fileLimits() (nofile, workerConns int) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Max < 8192 {
		return 0, 512
	}
	n := min(uint64(rl.Max), 65536) // rl.Max is int64 on some BSDs
	return int(n), int(min(n/2, 16384))
}
