// Package metrics exports an upload's figures to a monitoring system, the
// last stage beside the summary: a Prometheus text file for node_exporter's
// textfile collector (--metrics-file), rewritten while the run goes on and
// at its end, and a push to a Prometheus Pushgateway at the end
// (--pushgateway). It uses client_golang's registry, expfmt and push
// packages rather than formatting the exposition format by hand; the file
// is written as WriteToTextfile would, but through outfile (a new file
// renamed into place, never through a planted link).
//
// Every series carries a job_name label (--job-name; by default the input's
// base name without dates), so one node can run several partners into one
// directory, and a shard label when the run is one shard of a backfill
// (--shard), so shards neither overwrite each other on a Pushgateway nor
// collide in one textfile directory. The label is not "job": Prometheus
// sets that itself when it scrapes or when a Pushgateway receives a push.
// No series carries a row's values: only counts, a bid total, timestamps and
// the build.
//
// bulkload_last_run_timestamp_seconds, bulkload_last_run_success and
// bulkload_last_run_exit_code describe the last run that ended, and
// bulkload_last_success_timestamp_seconds the last one that exited 0. While
// a run goes on, the file keeps the values of the runs before (read back
// from the file it replaces), and a push adds to its group rather than
// replacing it (a failed run leaves the last success's timestamp there), so
// a run that is killed, never ends or fails leaves the staleness alert
// working:
//
//	time() - bulkload_last_success_timestamp_seconds > 26*3600
//	bulkload_last_run_success == 0
package metrics

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/redact"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// DefaultInterval is how often the metrics file is rewritten during a run.
const DefaultInterval = 10 * time.Second

// Label is the label that names the run's job on every series.
const Label = "job_name"

// ShardLabel is the label that names the shard of a backfill ("2-of-4") on
// every series of a sharded run; an unsharded run's series lack it.
const ShardLabel = "shard"

// Config says where a Recorder's figures go.
type Config struct {
	// Job is the job_name label of every series (--job-name).
	Job string
	// Shard, when set, is the shard label of every series and part of
	// the Pushgateway's grouping key ("2-of-4", --shard).
	Shard string
	// Build is the binary's build, the labels of bulkload_build_info.
	Build summary.Build
	// Hints name the settings the series' help texts point to (the
	// command line's flags); zero names none.
	Hints summary.Hints
	// File, when set, is the textfile collector's file (--metrics-file),
	// written with mode 0644 through a temporary file and a rename.
	File string
	// Interval is how often File is rewritten during the run;
	// DefaultInterval when 0.
	Interval time.Duration
	// Pushgateway, when set, is the Pushgateway's URL (--pushgateway); the
	// figures are pushed there when the run ends, interrupted or not.
	Pushgateway string
	// PushJob is the Pushgateway's job (--pushgateway-job); "bulkload"
	// when empty. The push adds to the group {job=PushJob, job_name=Job}
	// ({..., shard=Shard} for a shard): the series it carries replace
	// theirs, and bulkload_last_success_timestamp_seconds, which only a
	// successful run pushes, stays from the last success.
	PushJob string
	// Log receives warnings about figures that could not be written; nil
	// discards them.
	Log *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Recorder collects the figures of one run. Observe is safe for
// concurrent use with the rest; the caller calls Start once, then Finish
// once at the end.
type Recorder struct {
	cfg Config
	reg *prometheus.Registry

	mu       sync.Mutex
	start    time.Time
	rows     summary.Summary // tally of the rows seen so far; the final summary at the end
	api      func() submitter.Stats
	finished bool
	end      time.Time
	exit     int
	// prev is the last finished runs' figures, read back from the file
	// being replaced.
	prev previous

	stop chan struct{}
	done chan struct{}
}

// New returns a Recorder for cfg. A File or Pushgateway is not touched
// until Start.
func New(cfg Config) *Recorder {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.PushJob == "" {
		cfg.PushJob = "bulkload"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	var constLabels prometheus.Labels
	if cfg.Shard != "" {
		constLabels = prometheus.Labels{ShardLabel: cfg.Shard}
	}
	r := &Recorder{cfg: cfg, reg: prometheus.NewPedanticRegistry()}
	r.reg.MustRegister(collector{r: r, d: newDescs(constLabels, cfg.Hints)})
	return r
}

// Job is the job_name label of the run's series.
func (r *Recorder) Job() string { return r.cfg.Job }

// Enabled reports whether the figures go anywhere.
func (r *Recorder) Enabled() bool { return r.cfg.File != "" || r.cfg.Pushgateway != "" }

// Gatherer exposes the registry, for tests and for callers that serve it.
func (r *Recorder) Gatherer() prometheus.Gatherer { return r.reg }

// Start records the run's start, reads the last finished run's figures
// from the file it will replace, writes the file once (so an unwritable
// path fails here, before the first call) and rewrites it every Interval
// until Finish. The error is about the file; the run may go on without it.
func (r *Recorder) Start() error {
	r.mu.Lock()
	r.start = r.cfg.Now()
	r.mu.Unlock()
	if r.cfg.File == "" {
		return nil
	}
	r.readPrevious()
	if err := r.write(); err != nil {
		return err
	}
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go r.loop()
	return nil
}

func (r *Recorder) loop() {
	defer close(r.done)
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			if err := r.write(); err != nil {
				r.cfg.Log.Warn("metrics file not updated", "path", r.cfg.File, "err", err)
			}
		}
	}
}

// SetAPI gives the Recorder the client's statistics, read at every write.
func (r *Recorder) SetAPI(stats func() submitter.Stats) {
	r.mu.Lock()
	r.api = stats
	r.mu.Unlock()
}

// Observe counts one row's final line as the run goes (the engine's
// OnFinal).
func (r *Recorder) Observe(row lead.Row) {
	r.mu.Lock()
	r.rows.Count(row)
	r.mu.Unlock()
}

// Finish records the end of the run: its summary (nil when the run stopped
// before it had one, e.g. refused credentials) and its exit status, which
// sets bulkload_last_run_success (1 for exit 0). It stops the rewriting,
// writes the file a last time and pushes to the Pushgateway. ctx bounds the
// push. Failures are returned together; the figures are monitoring, so the
// caller logs them rather than changing the run's exit status.
func (r *Recorder) Finish(ctx context.Context, sum *summary.Summary, exit int) error {
	if r.stop != nil {
		close(r.stop)
		<-r.done
	}
	r.mu.Lock()
	if sum != nil {
		r.rows = *sum
	}
	r.finished, r.end, r.exit = true, r.cfg.Now(), exit
	r.mu.Unlock()

	var errs []error
	if r.cfg.File != "" {
		if err := r.write(); err != nil {
			errs = append(errs, &OutputError{Target: r.cfg.File, Err: err})
		}
	}
	if r.cfg.Pushgateway != "" {
		p := push.New(r.cfg.Pushgateway, r.cfg.PushJob).Grouping(Label, r.cfg.Job)
		if r.cfg.Shard != "" {
			p = p.Grouping(ShardLabel, r.cfg.Shard)
		}
		err := p.Gatherer(withoutGroupingLabels(r.reg)).AddContext(ctx)
		if err != nil {
			// The URL may carry credentials (user:pass@, ?token=),
			// and the push's error quotes it.
			errs = append(errs, &OutputError{Push: true, Target: redact.URL(r.cfg.Pushgateway), Err: errors.New(redact.URLsIn(err.Error()))})
		}
	}
	return errors.Join(errs...)
}

// OutputError is a failure to hand the figures on: to the textfile
// collector's file, or (Push) to the Pushgateway. Finish joins one per
// output that failed.
type OutputError struct {
	Push   bool
	Target string // the file, or the Pushgateway's URL without credentials
	Err    error  // a push's error has the credentials of its URLs removed
}

func (e *OutputError) Error() string {
	if e.Push {
		return fmt.Sprintf("push to the Pushgateway %s: %v", e.Target, e.Err)
	}
	return fmt.Sprintf("write the metrics file %s: %v", e.Target, e.Err)
}

func (e *OutputError) Unwrap() error { return e.Err }

// withoutGroupingLabels gathers g's series without their job_name and
// shard labels: the Pushgateway refuses a pushed series that repeats a
// label of its grouping key, and puts the key's labels back on every series
// it serves.
func withoutGroupingLabels(g prometheus.Gatherer) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := g.Gather()
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				m.Label = slices.DeleteFunc(m.Label, func(l *dto.LabelPair) bool {
					return l.GetName() == Label || l.GetName() == ShardLabel
				})
			}
		}
		return mfs, err
	})
}

// write replaces the file with the current figures, a new file of mode
// 0644 (node_exporter, another user, reads it; it holds no lead data).
// It is prometheus.WriteToTextfile through outfile, which never writes
// through a planted link.
func (r *Recorder) write() error {
	mfs, err := r.reg.Gather()
	if err != nil {
		return err
	}
	f, err := outfile.Create(r.cfg.File, 0o644)
	if err != nil {
		return err
	}
	defer f.Abort()
	w := bufio.NewWriter(f)
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Commit()
}

// previous holds the figures of the runs before this one that the file
// being replaced carried; each is valid when its has* is set.
type previous struct {
	runTime, success float64
	hasRun           bool
	exitCode         float64
	hasExit          bool // a file written before the exit code was kept lacks it
	successTime      float64
	hasSuccess       bool
}

// readPrevious keeps the last finished run's timestamp, success and exit
// status, and the last success's timestamp, from the file about to be
// replaced, so that they survive a run that never finishes. A missing or
// unreadable file is no previous run.
func (r *Recorder) readPrevious() {
	f, err := os.Open(r.cfg.File)
	if err != nil {
		return
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(f)
	if err != nil {
		return
	}
	value := func(name string) (float64, bool) {
		mf := mfs[name]
		if mf == nil {
			return 0, false
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels[Label] == r.cfg.Job && labels[ShardLabel] == r.cfg.Shard && m.GetGauge() != nil {
				return m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	var prev previous
	ts, ok1 := value("bulkload_last_run_timestamp_seconds")
	ok, ok2 := value("bulkload_last_run_success")
	code, ok3 := value("bulkload_last_run_exit_code")
	if ok1 && ok2 {
		prev.runTime, prev.success, prev.hasRun = ts, ok, true
		prev.exitCode, prev.hasExit = code, ok3
	}
	prev.successTime, prev.hasSuccess = value("bulkload_last_success_timestamp_seconds")
	r.mu.Lock()
	r.prev = prev
	r.mu.Unlock()
}
