package attack

import "context"

// dispatch is Schedule's loop, on a pacing thread: it waits for each shot's
// instant and hands the shot to a goroutine of its own to send.
func (e *Engine) dispatch(ctx context.Context, n int, plan func(i int) Shot) {
	for i := 0; i < n; i++ {
		s := plan(i)
		if !waitUntil(ctx, e.start.Add(s.At)) || !e.take() {
			return
		}
		select {
		case e.inflight <- struct{}{}:
		case <-ctx.Done():
			return
		}
		r := e.newResult(s)
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			e.send(ctx, r)
			<-e.inflight
			e.emit(r)
		}()
	}
}
