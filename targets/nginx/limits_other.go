//go:build !unix

package nginx

// fileLimits: nginx's defaults (Start refuses to run here anyway).
func fileLimits() (nofile, conns int) { return 0, 512 }
