package attack_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/refserver"
)

// Run a burst profile against a reference token bucket (20 tokens, one
// more per second) served on loopback: of 30 requests released at one
// instant, exactly the 20 in the bucket are admitted.
func ExampleRun() {
	opt, err := refserver.ParseBuiltin("builtin:token_bucket?rate=1/s&burst=20")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := refserver.Start("127.0.0.1:0", opt)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	req, err := attack.NewRequest("GET", srv.URL, nil, "")
	if err != nil {
		log.Fatal(err)
	}
	res, err := attack.Run(context.Background(), attack.Burst{K: 30}, attack.RunOptions{
		Request: req,
		Options: attack.Options{MaxRequests: 100},
		// Out: "results.jsonl" would also stream every result to a file.
	})
	if err != nil {
		log.Fatal(err)
	}
	m := res.Report.Metrics.Burst
	fmt.Printf("%d sent: %d admitted, %d rejected; cut short: %v\n", m.Size, m.Admitted, m.Rejected, res.CutShort())
	// Output: 30 sent: 20 admitted, 10 rejected; cut short: false
}
