package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/bulkload/bulkload/metrics"
	"github.com/bulkload/bulkload/outfile"
	"github.com/bulkload/bulkload/summary"
)

// MetricsOptions are upload's flags for a monitoring system.
type MetricsOptions struct {
	File        string
	Pushgateway string
	PushJob     string
	JobName     string
}

// NewMetricsOptions returns the metrics options with their defaults: the
// Pushgateway job "bulkload".
func NewMetricsOptions() *MetricsOptions { return &MetricsOptions{PushJob: "bulkload"} }

// outputs lists the metrics file for the check of every output before the
// first call.
func (o *MetricsOptions) outputs() []outfile.Output {
	return []outfile.Output{{Flag: "--metrics-file", Path: o.File}}
}

// recorder builds the run's metrics recorder; its Enabled is false when no
// metrics were asked for. shard is "K-of-N" for a shard of a backfill, ""
// otherwise: it labels the series and keys the Pushgateway's group.
func (o *MetricsOptions) recorder(input, shard string) *metrics.Recorder {
	job := o.JobName
	if job == "" {
		job = stableJobName(input)
	}
	return metrics.New(metrics.Config{Job: job, Shard: shard, File: o.File, Pushgateway: o.Pushgateway, PushJob: o.PushJob,
		Build: summary.Build(ReadBuildInfo()), Hints: cliHints()})
}

// datePart matches a date in an export's name, with an optional time after
// it: 20261122, 2026-11-22, 2026_11_22, 2026-11-22T023000, 20261122_0230.
const datePart = `(?:19|20)\d\d[-_.]?(?:0[1-9]|1[0-2])[-_.]?(?:0[1-9]|[12]\d|3[01])(?:[T_-]?[0-2]\d[-:.]?[0-5]\d(?:[-:.]?[0-5]\d)?Z?)?`

// stableJobName is the default job_name: the input's base name without its
// dates, so that a partner's nightly acme_20261122.csv and acme_20261123.csv
// are one series (and one Pushgateway group), not a new one each night.
// A name that is only a date gives "bulkload".
func stableJobName(input string) string {
	name := regexp.MustCompile(datePart).ReplaceAllString(inputName(input), "")
	name = regexp.MustCompile(`[-_.]{2,}`).ReplaceAllStringFunc(name, func(s string) string { return s[:1] })
	return cmp.Or(strings.Trim(name, "-_."), "bulkload")
}

// finishMetrics writes and pushes the run's last figures, whatever ended
// it. A failure is logged: the metrics are for monitoring and do not change
// the run's exit status (a missing update shows in the staleness alert).
func (u *uploader) finishMetrics(ctx context.Context, code int) {
	if u.metrics == nil || !u.metrics.Enabled() {
		return
	}
	if !u.outputsChecked && !u.ledgerFailed || u.refused() {
		// Stopped before its outputs were proven (a lock held, an output
		// holding another upload's outcomes, a bad path), or refused
		// because its files are another run's: the figures of the run
		// before stay (the exit status and the message say why). A
		// ledger that cannot be opened is no other run's: recorded.
		return
	}
	if !u.metricsStarted {
		// Stopped before its checks were through (credentials refused,
		// Endpoint down, too many invalid rows): still recorded.
		if err := u.startMetrics(); err != nil {
			u.log.Warn("metrics not written", "err", err)
			return
		}
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := u.metrics.Finish(pctx, u.summary, code); err != nil {
		u.log.Warn("metrics not written", "err", metricsFlags(err))
	}
}

// metricsFlags names the flag of each metrics output in Finish's error.
func metricsFlags(err error) error {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		var oe *metrics.OutputError
		switch {
		case errors.As(e, &oe) && oe.Push:
			e = fmt.Errorf("--pushgateway: %w", e)
		case errors.As(e, &oe):
			e = fmt.Errorf("--metrics-file: %w", e)
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}
