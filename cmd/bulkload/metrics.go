package main

import (
	"context"
	"flag"
	"time"

	"github.com/bulkload/bulkload/metrics"
	"github.com/bulkload/bulkload/report"
)

// metricsOptions are upload's flags for a monitoring system.
type metricsOptions struct {
	file        string
	pushgateway string
	pushJob     string
	jobName     string
}

func (o *metricsOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.file, "metrics-file", "", "write Prometheus metrics to this file for node_exporter's textfile collector, every 10s and at the end")
	fs.StringVar(&o.pushgateway, "pushgateway", "", "push Prometheus metrics to this Pushgateway URL at the end of the run")
	fs.StringVar(&o.pushJob, "pushgateway-job", "bulkload", "the Pushgateway job the metrics are pushed under")
	fs.StringVar(&o.jobName, "job-name", "", "the job_name label of the metrics (default: the input's base name)")
}

// outputs lists the metrics file for the check of every output before the
// first call.
func (o *metricsOptions) outputs() []report.Output {
	return []report.Output{{Flag: "--metrics-file", Path: o.file}}
}

// recorder builds the run's metrics recorder; its Enabled is false when no
// metrics were asked for.
func (o *metricsOptions) recorder(input string) *metrics.Recorder {
	job := o.jobName
	if job == "" {
		job = inputName(input)
	}
	return metrics.New(metrics.Config{Job: job, File: o.file, Pushgateway: o.pushgateway, PushJob: o.pushJob})
}

// finishMetrics writes and pushes the run's last figures, whatever ended
// it. A failure is logged: the metrics are for monitoring and do not change
// the run's exit status (a missing update shows in the staleness alert).
func (u *uploader) finishMetrics(ctx context.Context, code int) {
	if u.metrics == nil || !u.metrics.Enabled() {
		return
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := u.metrics.Finish(pctx, u.summary, code); err != nil {
		u.log.Warn("metrics not written", "err", err)
	}
}
