package report

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Progress draws a live status line on a terminal — phase, requests,
// admitted / rejected / errors, time left of the budget — fed by the
// engine as a result sink. A disabled Progress (not a terminal, --quiet)
// only counts. Colour is used unless NO_COLOR is set.
type Progress struct {
	w       io.Writer
	on      bool
	color   bool
	start   time.Time
	budget  time.Duration
	mu      sync.Mutex
	phase   string
	n       int
	adm     int
	rej     int
	errs    int
	stop    chan struct{}
	done    chan struct{}
	drawn   bool
	stopped bool
	said    time.Duration // the budget last announced (SetBudget)
}

// OnTerminal says whether w is a terminal, the only place a progress line
// is drawn: in a file or a pipe its redraws would be noise.
func OnTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressEvery is how often the line is redrawn.
const progressEvery = 200 * time.Millisecond

// NewProgress starts a progress line on w when enabled; budget is the run's
// time budget (0: unknown, no time left shown).
func NewProgress(w io.Writer, enabled bool, budget time.Duration) *Progress {
	p := &Progress{w: w, on: enabled, color: os.Getenv("NO_COLOR") == "", start: time.Now(), budget: budget,
		stop: make(chan struct{}), done: make(chan struct{})}
	if !enabled {
		close(p.done)
		return p
	}
	go p.loop()
	return p
}

// Add is the engine sink: count one result.
func (p *Progress) Add(r *results.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if r.Phase != "" {
		p.phase = r.Phase
	}
	switch {
	case r.Error != "":
		p.errs++
	case r.Admitted():
		p.adm++
	case r.Rejected():
		p.rej++
	}
}

func (p *Progress) loop() {
	defer close(p.done)
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			p.mu.Lock()
			if p.drawn {
				fmt.Fprint(p.w, "\r\x1b[2K")
				p.drawn = false
			}
			p.mu.Unlock()
			return
		case <-t.C:
			p.mu.Lock()
			fmt.Fprint(p.w, "\r\x1b[2K"+p.lineLocked(time.Since(p.start)))
			p.drawn = true
			p.mu.Unlock()
		}
	}
}

// Line is the current status line, without colour or control codes.
func (p *Progress) Line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.color
	p.color = false
	s := p.lineLocked(time.Since(p.start))
	p.color = c
	return s
}

func (p *Progress) lineLocked(elapsed time.Duration) string {
	paint := func(code, s string) string {
		if !p.color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	phase := p.phase
	if phase == "" {
		phase = "starting"
	}
	s := fmt.Sprintf("%s · %d requests · %s admitted · %s rejected", phase, p.n,
		paint("32", fmt.Sprint(p.adm)), paint("31", fmt.Sprint(p.rej)))
	if p.errs > 0 {
		s += " · " + paint("35", fmt.Sprintf("%d errors", p.errs))
	}
	if p.budget > 0 {
		left := max(p.budget-elapsed, 0).Round(time.Second)
		s += fmt.Sprintf(" · ≤ %s left", left)
	} else {
		s += fmt.Sprintf(" · %s", elapsed.Round(100*time.Millisecond))
	}
	return s
}

// SetBudget changes the budget the line counts down from, measured from the
// start (a probe that grew its own), and prints why on a line of its own.
func (p *Progress) SetBudget(to time.Duration, why string) {
	p.mu.Lock()
	grew := to != p.budget
	p.budget = to
	p.mu.Unlock()
	if grew && p.on && why != "" && to-p.said >= progressSayStep {
		p.said = to
		fmt.Fprintf(p.Writer(), "%s: probing up to %s\n", why, to.Round(time.Second))
	}
}

// progressSayStep is how much a budget must have grown since the last
// message for another: a lock's growing length moves it a little at
// every check.
const progressSayStep = 15 * time.Second

// Stop clears the line; safe to call more than once.
func (p *Progress) Stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	p.mu.Unlock()
	if p.on {
		close(p.stop)
	}
	<-p.done
}

// Writer returns a writer for other messages on the progress line's
// stream: it clears the line first, so a message never lands after it.
func (p *Progress) Writer() io.Writer { return progressWriter{p} }

type progressWriter struct{ p *Progress }

func (pw progressWriter) Write(b []byte) (int, error) {
	p := pw.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[2K")
		p.drawn = false
	}
	return p.w.Write(b)
}
