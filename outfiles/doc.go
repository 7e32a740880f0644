// Package outfiles keeps the files a command writes from destroying what it
// reads or what an earlier run recorded: it names the results streams of a
// run (streams.go), finds two flags that name one file (clash.go), and
// writes a report file whole or not at all (write.go). It knows flags only
// as the names the caller gives it for its messages.
package outfiles
