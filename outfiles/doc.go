// Package outfiles keeps the files a command writes from destroying what it
// reads or what an earlier run recorded: it names the results streams of a
// run and refuses one over an input, a report or an earlier run's results
// (streams.go), finds two flags that name one file and a report file that
// cannot be created (clash.go), and writes a report file whole or not at
// all, saying how to render one again that was not (write.go). It knows
// flags only as the names the caller gives it for its messages.
package outfiles
