package results

import (
	"fmt"
	"sort"
	"strings"
)

// Interrupted is StreamEnd.Stopped for a run a signal (Ctrl-C) cut short.
const Interrupted = "interrupted"

// Untested says why a run with this summary tested nothing: no request
// was answered with an admission or a rejection, so nothing a limiter did
// was observed. "" when something was. stopped is why the run ended
// before its plan did ("" when it did not; Interrupted for a signal).
func (s Summary) Untested(stopped string) string {
	if s.Admitted+s.Rejected > 0 {
		return ""
	}
	switch {
	case s.Requests == 0 && stopped != "":
		return fmt.Sprintf("no request was sent before the run was cut short (%s)", stopped)
	case s.Requests == 0:
		return "no request was sent"
	case s.Errors == s.Requests:
		if stopped == Interrupted {
			// Interrupting abandons the requests in flight, so their
			// errors may be the interruption's own.
			return "the run was interrupted before any request was answered (the commonest error: " + commonest(s.ErrorKinds) + ")"
		}
		return "every request failed: " + commonest(s.ErrorKinds)
	}
	var parts []string
	for code, n := range s.Statuses {
		parts = append(parts, fmt.Sprintf("%d (%d)", code, n))
	}
	sort.Strings(parts)
	return fmt.Sprintf("no answer was an admission (2xx) or a rejection (429, 503, 403): statuses %s; is the URL right?", strings.Join(parts, ", "))
}

// commonest names the most frequent error, and how many others there were.
func commonest(kinds map[string]int) string {
	best, total := "", 0
	for k, n := range kinds {
		total += n
		if n > kinds[best] || (n == kinds[best] && k < best) {
			best = k
		}
	}
	if len(kinds) > 1 {
		return fmt.Sprintf("%s (%d of %d; %d other kinds of error)", best, kinds[best], total, len(kinds)-1)
	}
	return best
}
