package results

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// StreamSchema versions the results file format (README: "Results stream").
const StreamSchema = 1

// StreamHeader is the first line of a results file.
type StreamHeader struct {
	Type    string            `json:"type"` // "header"
	Schema  int               `json:"schema"`
	Tool    string            `json:"tool"`
	Command string            `json:"command"` // attack, probe, compare
	Target  string            `json:"target"`  // as the user wrote it
	URL     string            `json:"url"`     // what was actually attacked
	Profile string            `json:"profile,omitempty"`
	Options map[string]string `json:"options,omitempty"`
	Start   time.Time         `json:"start"` // wall clock of offset 0

	// A shard of a run split across processes or machines (README: "Beyond
	// one machine") says which part it is and of what. Absent for a whole
	// run, so a file written before sharding reads the same.
	//
	// RunID is shared by every shard of one run; Shard is this one's part.
	RunID string `json:"run_id,omitempty"`
	Shard *Shard `json:"shard,omitempty"`
	// Host is the machine (the pod, in Kubernetes) that ran it.
	Host string `json:"host,omitempty"`
	// StartAt is the common instant the run was told to start at (then
	// also Start); BeganAt is when this process's wait for it actually
	// ended, on its own clock.
	StartAt time.Time `json:"start_at,omitzero"`
	BeganAt time.Time `json:"began_at,omitzero"`
}

// StreamEnd is the last line of a complete results file; an interrupted run
// has none, and readers still use every result before it.
type StreamEnd struct {
	Type     string   `json:"type"` // "end"
	Requests int      `json:"requests"`
	Notes    []string `json:"notes,omitempty"`
	Elapsed  int64    `json:"elapsed_ns"`
	// Outcome is the attack profile's conclusion, so a later `report` shows
	// what the live run printed. Absent for probes (report infers again)
	// and for runs that ended before the profile could conclude.
	Outcome *ProfileOutcome `json:"outcome,omitempty"`
	// Stopped says why the run ended before its plan did: "interrupted"
	// (a signal), or empty when it ran to its end.
	Stopped string `json:"stopped,omitempty"`
}

// ProfileOutcome is an attack profile's Report as stored in the end record.
// Metrics reads back as the same typed value the live run had: ReadStream
// decodes it by Profile (the header's profile in files that predate it).
type ProfileOutcome struct {
	Profile string         `json:"profile,omitempty"`
	Verdict string         `json:"verdict"`
	Rows    [][]string     `json:"rows,omitempty"`
	Metrics ProfileMetrics `json:"metrics,omitzero"`

	raw json.RawMessage // metrics not yet decoded (no profile named)
}

// UnmarshalJSON decodes the metrics by the outcome's profile; an outcome
// that names none keeps them for ReadStream to decode by the header's.
func (o *ProfileOutcome) UnmarshalJSON(b []byte) error {
	var w struct {
		Profile string          `json:"profile"`
		Verdict string          `json:"verdict"`
		Rows    [][]string      `json:"rows"`
		Metrics json.RawMessage `json:"metrics"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	o.Profile, o.Verdict, o.Rows, o.raw = w.Profile, w.Verdict, w.Rows, w.Metrics
	if w.Profile == "" {
		return nil
	}
	return o.decodeMetrics(w.Profile)
}

func (o *ProfileOutcome) decodeMetrics(profile string) error {
	m, err := DecodeMetrics(profile, o.raw)
	if err != nil {
		return err
	}
	o.Metrics, o.raw = m, nil
	return nil
}

// Report is the outcome as the profile's Report (without the summary,
// which a reader recomputes from the results).
func (o *ProfileOutcome) Report() Report {
	return Report{Profile: o.Profile, Verdict: o.Verdict, Rows: o.Rows, Metrics: o.Metrics}
}

// Stream appends results to a file as they arrive, in the format its name
// asks for (FormatOf: compact for .rcs, JSON Lines otherwise). A writer
// goroutine does the encoding so the senders never wait on the disk, and it
// flushes at least every 100 ms so a crash or Ctrl-C loses almost nothing.
type Stream struct {
	f       *os.File
	w       recordWriter
	ch      chan *Result
	done    chan struct{}
	mu      sync.Mutex
	err     error
	count   int
	outcome *ProfileOutcome
	stopped string

	// closing guards ch: Add holds it shared while it sends, Close
	// exclusively while it marks the stream closed.
	closing  sync.RWMutex
	closed   bool
	closeErr error
	dropped  int // results added after Close
}

// CreateStream creates (truncates) path and writes the header line.
func CreateStream(path string, h StreamHeader) (*Stream, error) {
	s, err := OpenStream(path)
	if err != nil {
		return nil, err
	}
	if err := s.Begin(h); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenStream creates the file without writing anything yet: a run that
// waits for its start instant learns at once that it cannot write, and
// writes its header (with the instant it began) after the wait (Begin).
func OpenStream(path string) (*Stream, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot write results to %s: %w", path, err)
	}
	var w recordWriter = newJSONLWriter(f)
	if FormatOf(path) == Compact {
		w = newCompactWriter(f)
	}
	return &Stream{f: f, w: w, ch: make(chan *Result, 8192), done: make(chan struct{})}, nil
}

// recordWriter writes one format's records: the header first, results as
// they come, the end record last. Nothing need reach the file before
// flush, which makes everything written so far readable.
type recordWriter interface {
	header(h StreamHeader) error
	result(r *Result) error
	end(e StreamEnd) error
	flush() error
}

// Begin writes the header line of a stream from OpenStream and starts the
// writer; on error the file is closed.
func (s *Stream) Begin(h StreamHeader) error {
	h.Type, h.Schema, h.Tool = "header", StreamSchema, "ratecheck"
	if err := s.w.header(h); err != nil {
		s.f.Close()
		return err
	}
	if err := s.w.flush(); err != nil {
		s.f.Close()
		return err
	}
	go s.loop()
	return nil
}

// Discard closes and removes a stream whose run never began.
func (s *Stream) Discard() {
	s.f.Close()
	os.Remove(s.f.Name())
}

// streamDrainEvery is how often the writer takes what has been queued. It
// does not wait on the queue itself: a writer parked on an empty channel is
// woken by every Add, a goroutine hand-off per result (at 50,000/s, a
// twentieth of the process's CPU went to the writer); woken by its own
// ticker it takes a few hundred at a time.
const streamDrainEvery = 2 * time.Millisecond

// streamFlushEvery bounds how long a written result may sit in the buffer.
const streamFlushEvery = 100 * time.Millisecond

func (s *Stream) loop() {
	defer close(s.done)
	tick := time.NewTicker(streamDrainEvery)
	defer tick.Stop()
	flushed := time.Now()
	for {
		for queued := true; queued; {
			select {
			case r, ok := <-s.ch:
				if !ok {
					return
				}
				s.setErr(s.w.result(r))
				s.count++
			default:
				queued = false
			}
		}
		if time.Since(flushed) >= streamFlushEvery {
			s.setErr(s.w.flush())
			flushed = time.Now()
		}
		<-tick.C
	}
}

func (s *Stream) setErr(err error) {
	if err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
}

// Add queues one result for writing. The result must not change afterwards.
// A result added after Close is not written (the file is complete): it is
// dropped, and Dropped counts it.
func (s *Stream) Add(r *Result) {
	s.closing.RLock()
	defer s.closing.RUnlock()
	if s.closed {
		s.mu.Lock()
		s.dropped++
		s.mu.Unlock()
		return
	}
	s.ch <- r
}

// Dropped is how many results arrived after Close and were not written.
func (s *Stream) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Conclude records the profile's report for the end line; call it before
// Close.
func (s *Stream) Conclude(rep Report) {
	s.outcome = &ProfileOutcome{Profile: rep.Profile, Verdict: rep.Verdict, Rows: rep.Rows, Metrics: rep.Metrics}
}

// SetStopped records why the run ended early for the end line ("" when it
// ran to its end); call it before Close.
func (s *Stream) SetStopped(reason string) { s.stopped = reason }

// Close writes the end line, flushes and closes the file. Closing again
// returns the first Close's error and writes nothing.
func (s *Stream) Close(notes []string, elapsed time.Duration) error {
	s.closing.Lock()
	if s.closed {
		s.closing.Unlock()
		return s.closeErr
	}
	s.closed = true
	close(s.ch)
	s.closing.Unlock()
	<-s.done
	s.setErr(s.w.end(StreamEnd{Type: "end", Requests: s.count, Notes: notes, Elapsed: int64(elapsed), Outcome: s.outcome, Stopped: s.stopped}))
	s.setErr(s.w.flush())
	s.setErr(s.f.Close())
	s.mu.Lock()
	s.closeErr = s.err
	s.mu.Unlock()
	return s.closeErr
}
