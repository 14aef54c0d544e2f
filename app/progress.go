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
	out   io.Writer
	mode  string // "bar", "log" or "off"
	log   *slog.Logger
	done  *atomic.Int64
	total func() int64         // estimated rows in the input, -1 unknown
	rate  func() *summary.Rate // the pacing so far; nil: not shown
	bound func() string        // calls in flight and what binds them; nil: not shown
	// outage is the sentence of the outage the run waits out now ("" when
	// none): "waiting for the identity provider (503 since 02:31:07, 14 s)".
	outage   func() string
	begin    time.Time
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
	return &progress{out: out, mode: mode, log: log, done: done, total: total, quit: make(chan struct{})}
}

// start begins the display in its own goroutine; stop ends it.
func (p *progress) start() {
	p.begin = time.Now()
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

// figures returns rows done, rows per second, the fraction done (-1 when
// the input's size is unknown) and the estimated time left. The fraction is
// rows done over the estimated row count, not bytes read: reading runs
// ahead of the calls.
func (p *progress) figures() (int64, float64, float64, time.Duration) {
	done := p.done.Load()
	elapsed := time.Since(p.begin)
	rate := float64(done) / elapsed.Seconds()
	frac := -1.0
	var eta time.Duration
	if total := p.total(); total > 0 {
		frac = min(float64(done)/float64(total), 1)
		if rate > 0 {
			eta = time.Duration(float64(total-min(done, total)) / rate * float64(time.Second)).Round(time.Second)
		}
	}
	return done, rate, frac, eta
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
	done, rate, frac, eta := p.figures()
	if frac < 0 {
		fmt.Fprintf(p.out, "\r%d rows done  %.1f rows/s%s   ", done, rate, p.rateNote())
		return
	}
	const width = 30
	filled := int(frac * width)
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '-'
		if i < filled {
			bar[i] = '#'
		}
	}
	fmt.Fprintf(p.out, "\r[%s] %3.0f%%  %d rows  %.1f rows/s  ETA %s%s   ", bar, frac*100, done, rate, eta, p.rateNote())
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
	done, rate, frac, eta := p.figures()
	if w := p.waiting(); w != "" {
		p.log.Warn("progress: "+w, "rows_done", done)
		return
	}
	args := []any{"rows_done", done, "rows_per_s", fmt.Sprintf("%.1f", rate)}
	if frac >= 0 {
		args = append(args, "pct_done", fmt.Sprintf("%.1f", frac*100), "eta", eta.String())
	}
	if p.rate != nil {
		args = append(args, "rate", p.rate().String())
	}
	if p.bound != nil {
		args = append(args, "concurrency", strings.TrimSpace(p.bound()))
	}
	p.log.Info("progress", args...)
}
