package app

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulkload/bulkload/summary"
	"golang.org/x/term"
)

// progress shows how far an upload is: a one-line bar redrawn on a
// terminal, or a log line every logEvery for cron jobs and pipes.
type progress struct {
	out  io.Writer
	mode string // "bar", "log" or "off"
	log  *slog.Logger
	done *atomic.Int64
	// earlier counts the rows of done whose line an earlier run wrote (a
	// resumed run passes them at once); nil: none. Rates and the ETA
	// count this run's rows only.
	earlier *atomic.Int64
	total   func() int64         // estimated rows in the input, -1 unknown
	rate    func() *summary.Rate // the pacing so far; nil: not shown
	bound   func() string        // calls in flight and what binds them; nil: not shown
	// outage is the sentence of the outage the run waits out now ("" when
	// none): "waiting for the identity provider (503 since 02:31:07, 14 s)".
	outage   func() string
	begin    time.Time
	now      func() time.Time // time.Now; tests set their own
	quit     chan struct{}
	finished sync.WaitGroup
}

const (
	barEvery = 250 * time.Millisecond
	logEvery = 10 * time.Second
)

func newProgress(out io.Writer, mode string, log *slog.Logger, done *atomic.Int64, total func() int64) *progress {
	if mode == "auto" {
		mode = "log"
		if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			mode = "bar"
		}
	}
	return &progress{out: out, mode: mode, log: log, done: done, total: total, now: time.Now, quit: make(chan struct{})}
}

// start begins the display in its own goroutine; stop ends it.
func (p *progress) start() {
	p.begin = p.now()
	if p.mode == "off" {
		return
	}
	every := logEvery
	if p.mode == "bar" {
		every = barEvery
	}
	p.finished.Add(1)
	go func() {
		defer p.finished.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				if p.mode == "bar" {
					p.draw()
					fmt.Fprintln(p.out)
				}
				return
			case <-t.C:
				if p.mode == "bar" {
					p.draw()
				} else {
					p.logLine()
				}
			}
		}
	}()
}

func (p *progress) stop() {
	close(p.quit)
	p.finished.Wait()
}

// figures are what the display shows: rows done (earlier of them from an
// earlier run, when resuming), this run's rows per second, the fraction
// done (-1 when the input's size is unknown) and the estimated time left
// (-1 when no rate is known yet). The fraction is rows done over the
// estimated row count, not bytes read: reading runs ahead of the calls.
// The rate and the ETA count this run's rows only: a resumed run passes
// the earlier run's rows at once, which made "18292 rows 72892.7 rows/s
// ETA 1s" of a run with 17 minutes to go.
type figures struct {
	done, earlier int64
	rate, frac    float64
	eta           time.Duration
}

func (p *progress) figures() figures {
	f := figures{done: p.done.Load(), frac: -1, eta: -1}
	if p.earlier != nil {
		f.earlier = min(p.earlier.Load(), f.done)
	}
	if elapsed := p.now().Sub(p.begin).Seconds(); elapsed > 0 {
		f.rate = float64(f.done-f.earlier) / elapsed
	}
	if total := p.total(); total > 0 {
		f.frac = min(float64(f.done)/float64(total), 1)
		if f.rate > 0 {
			f.eta = time.Duration(float64(total-min(f.done, total)) / f.rate * float64(time.Second)).Round(time.Second)
		}
	}
	return f
}

// rowsText is the rows done, and how many of them an earlier run did.
func (f figures) rowsText() string {
	if f.earlier > 0 {
		return fmt.Sprintf("%d rows (%d from the earlier run)", f.done, f.earlier)
	}
	return fmt.Sprintf("%d rows", f.done)
}

// etaText is the time left, or "unknown" before this run has done a row.
func (f figures) etaText() string {
	if f.eta < 0 {
		return "unknown"
	}
	return f.eta.String()
}

// waiting is the outage sentence, or "".
func (p *progress) waiting() string {
	if p.outage == nil {
		return ""
	}
	return p.outage()
}

func (p *progress) draw() {
	if w := p.waiting(); w != "" {
		fmt.Fprintf(p.out, "\r%d rows done  %s   ", p.done.Load(), w)
		return
	}
	f := p.figures()
	if f.frac < 0 {
		fmt.Fprintf(p.out, "\r%s done  %.1f rows/s%s   ", f.rowsText(), f.rate, p.rateNote())
		return
	}
	const width = 30
	filled := int(f.frac * width)
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '-'
		if i < filled {
			bar[i] = '#'
		}
	}
	fmt.Fprintf(p.out, "\r[%s] %3.0f%%  %s  %.1f rows/s  ETA %s%s   ", bar, f.frac*100, f.rowsText(), f.rate, f.etaText(), p.rateNote())
}

// rateNote is the bar's short account of the pacing: "  291/s settled,
// 0.4% 429", or "  158/s climbing, 0.0% 429" while auto has found no limit.
func (p *progress) rateNote() string {
	if p.rate == nil {
		return ""
	}
	r := p.rate()
	state := "fixed"
	switch {
	case r.Auto && r.LimitFound:
		state = "settled"
	case r.Auto:
		state = "climbing"
	}
	note := fmt.Sprintf("  %.0f/s %s, %.1f%% 429", r.CallsPerSecond, state, r.Share429())
	if p.bound != nil {
		note += p.bound()
	}
	return note
}

func (p *progress) logLine() {
	f := p.figures()
	if w := p.waiting(); w != "" {
		p.log.Warn("progress: "+w, "rows_done", f.done)
		return
	}
	args := []any{"rows_done", f.done}
	if f.earlier > 0 {
		args = append(args, "rows_earlier_run", f.earlier)
	}
	args = append(args, "rows_per_s", fmt.Sprintf("%.1f", f.rate))
	if f.frac >= 0 {
		args = append(args, "pct_done", fmt.Sprintf("%.1f", f.frac*100), "eta", f.etaText())
	}
	if p.rate != nil {
		args = append(args, "rate", p.rate().Text(cliHints()))
	}
	if p.bound != nil {
		args = append(args, "concurrency", strings.TrimSpace(p.bound()))
	}
	p.log.Info("progress", args...)
}
