// Command ratecheck load-tests HTTP rate limiters, infers their algorithm and
// grades their response contract. See README.md.
package main

import (
	"os"

	"github.com/ratecheck/ratecheck/cmd"
)

func main() { os.Exit(cmd.Execute()) }
