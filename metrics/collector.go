package metrics

import (
	"cmp"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/submitter"
	"github.com/bulkload/bulkload/summary"
)

// Outcomes of an API attempt, the outcome label of
// bulkload_api_attempts_total.
const (
	OutcomeOK           = "ok"
	OutcomeGraphQLError = "graphql_error"
	Outcome429          = "429"
	Outcome5xx          = "5xx"
	OutcomeNetwork      = "network"
	OutcomeOther        = "other"
)

// descs are the descriptors of the exported series, built once per
// Recorder: constLabels (the shard) go on every series.

type descs struct {
	rows         *prometheus.Desc
	invalidRatio *prometheus.Desc
	qualified    *prometheus.Desc
	bid          *prometheus.Desc
	calls        *prometheus.Desc
	retries      *prometheus.Desc
	attempts     *prometheus.Desc
	tokens       *prometheus.Desc
	rate         *prometheus.Desc
	concLimit    *prometheus.Desc
	inFlight     *prometheus.Desc
	latency      *prometheus.Desc
	outages      *prometheus.Desc
	waiting      *prometheus.Desc
	runStart     *prometheus.Desc
	runDuration  *prometheus.Desc
	inProgress   *prometheus.Desc
	lastRunTime  *prometheus.Desc
	lastSuccess  *prometheus.Desc
	lastExitCode *prometheus.Desc
	lastOK       *prometheus.Desc
	buildInfo    *prometheus.Desc
}

func newDescs(constLabels prometheus.Labels, h summary.Hints) descs {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, append([]string{Label}, labels...), constLabels)
	}
	// named is text naming a setting when h names it, else "".
	named := func(setting, text string) string {
		if setting == "" {
			return ""
		}
		return text
	}
	return descs{
		rows:         desc("bulkload_rows_total", "Rows by final status (not_sent: read but not sent because the run stopped; not_reached: never read because the run stopped first"+named(h.Resume, "; "+h.Resume+" sends both")+").", "status"),
		invalidRatio: desc("bulkload_invalid_ratio", "Share of the run's rows that were invalid (0 to 1): not sent, listed in the rejects file; within "+cmp.Or(h.MaxInvalid, "the limit on invalid rows")+" they do not fail the run."),
		qualified:    desc("bulkload_qualified_total", "Rows whose lead qualified (result code 1013-1017)."),
		bid:          desc("bulkload_bid_value_dollars_total", "Sum of the bid values of qualified leads, in dollars."),
		calls:        desc("bulkload_api_calls_total", "GraphQL calls by operation (a call may take several attempts).", "operation"),
		retries:      desc("bulkload_api_retries_total", "Attempts beyond the first, by operation.", "operation"),
		attempts:     desc("bulkload_api_attempts_total", "HTTP attempts by operation and outcome (ok, graphql_error, 429, 5xx, network, other).", "operation", "outcome"),
		tokens:       desc("bulkload_tokens_fetched_total", "Access tokens fetched from the token endpoint."),
		rate:         desc("bulkload_rate_calls_per_second", "The shared call rate in force (0: unlimited)."),
		concLimit:    desc("bulkload_concurrency_limit", "The limit on API calls in flight in force ("+named(h.Concurrency, h.Concurrency+": ")+"fixed, or learned by auto)."),
		inFlight:     desc("bulkload_calls_in_flight", "API calls in flight now (HTTP attempts holding a place)."),
		latency:      desc("bulkload_api_latency_seconds", "Latency of each HTTP attempt that got a reply or timed out, from the request written to the reply's first byte (no backoff, no wait for the rate or a place)."),
		outages:      desc("bulkload_outages_total", "Outages of the service or its identity provider the run began to wait out."),
		waiting:      desc("bulkload_outage_waiting", "1 while the run waits out an outage (no new rows are taken), else 0."),
		runStart:     desc("bulkload_run_start_timestamp_seconds", "When the current or last run started."),
		runDuration:  desc("bulkload_run_duration_seconds", "How long the current or last run has taken."),
		inProgress:   desc("bulkload_run_in_progress", "1 while a run goes on, 0 once it ended."),
		lastRunTime:  desc("bulkload_last_run_timestamp_seconds", "When the last finished run ended."),
		lastSuccess:  desc("bulkload_last_run_success", "1 when the last finished run exited 0, else 0."),
		lastExitCode: desc("bulkload_last_run_exit_code", "The exit status of the last finished run."),
		lastOK:       desc("bulkload_last_success_timestamp_seconds", "When the last run that exited 0 ended."),
		buildInfo:    desc("bulkload_build_info", "Always 1: the labels say which build of bulkload ran.", "version", "revision", "goversion"),
	}
}

// collector turns a Recorder's figures into const metrics at every gather:
// the counts it exports are kept elsewhere (the summary, the client's
// statistics), so they are read, not counted twice.
type collector struct {
	r *Recorder
	d descs
}

// Describe lists every descriptor, also of the series Collect leaves out
// while they have no value (the last run's before any run finished).
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	d := c.d
	for _, x := range []*prometheus.Desc{d.rows, d.invalidRatio, d.qualified, d.bid, d.calls, d.retries, d.attempts, d.tokens, d.rate,
		d.concLimit, d.inFlight, d.latency, d.outages, d.waiting, d.runStart, d.runDuration, d.inProgress, d.lastRunTime, d.lastSuccess, d.lastExitCode, d.lastOK, d.buildInfo} {
		ch <- x
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	r, d := c.r, c.d
	r.mu.Lock()
	rows := r.rows
	api := r.api
	start, end, finished, exit := r.start, r.end, r.finished, r.exit
	prev := r.prev
	r.mu.Unlock()
	job := r.cfg.Job

	counter := func(pd *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(pd, prometheus.CounterValue, v, append([]string{job}, labels...)...)
	}
	gauge := func(pd *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(pd, prometheus.GaugeValue, v, append([]string{job}, labels...)...)
	}

	for _, i := range lead.Statuses() {
		counter(d.rows, float64(rows.Of(i)), string(i.Status))
	}
	counter(d.rows, float64(rows.NotSent), "not_sent")
	counter(d.rows, float64(rows.NotReached), "not_reached")
	gauge(d.invalidRatio, rows.InvalidShare())
	counter(d.qualified, float64(rows.Qualified))
	counter(d.bid, float64(rows.BidCents)/100)

	var st submitter.Stats
	if api != nil {
		st = api()
	}
	for _, op := range []struct {
		name string
		s    submitter.OpStats
	}{
		{"createLead", st.CreateLead},
		{"submitLead", st.SubmitLead},
		{"lead", st.Lead},
		{"preflight", st.Preflight},
	} {
		counter(d.calls, float64(op.s.Calls), op.name)
		counter(d.retries, float64(op.s.Retries), op.name)
		for _, o := range []struct {
			outcome string
			n       int64
		}{
			{OutcomeOK, op.s.OK},
			{OutcomeGraphQLError, op.s.GraphQLError},
			{Outcome429, op.s.Throttled},
			{Outcome5xx, op.s.ServerError},
			{OutcomeNetwork, op.s.Network},
			{OutcomeOther, op.s.Other},
		} {
			counter(d.attempts, float64(o.n), op.name, o.outcome)
		}
	}
	counter(d.tokens, float64(st.TokensFetched))
	gauge(d.rate, st.CurrentRate)
	if api != nil {
		gauge(d.concLimit, float64(st.Concurrency.Limit))
		gauge(d.inFlight, float64(st.Concurrency.InFlight))
		buckets := make(map[float64]uint64, len(submitter.LatencyBuckets))
		var cum uint64
		for i, le := range submitter.LatencyBuckets {
			cum += uint64(st.AttemptLatency.Counts[i])
			buckets[le] = cum
		}
		ch <- prometheus.MustNewConstHistogram(d.latency, uint64(st.AttemptLatency.Count()), st.AttemptLatency.SumSeconds, buckets, job)
	}
	counter(d.outages, float64(st.Outages))
	waiting := 0.0
	if st.OutageWaiting && !finished {
		waiting = 1
	}
	gauge(d.waiting, waiting)

	if !start.IsZero() {
		gauge(d.runStart, float64(start.UnixMilli())/1e3)
		until := r.cfg.Now()
		if finished {
			until = end
		}
		gauge(d.runDuration, until.Sub(start).Seconds())
	}
	inProgress := 1.0
	if finished {
		inProgress = 0
	}
	gauge(d.inProgress, inProgress)
	b := r.cfg.Build
	gauge(d.buildInfo, 1, cmp.Or(b.Version, "(unknown)"), b.Revision, cmp.Or(b.GoVersion, runtime.Version()))
	switch {
	case finished:
		success := 0.0
		if exit == 0 {
			success = 1
		}
		gauge(d.lastRunTime, float64(end.UnixMilli())/1e3)
		gauge(d.lastSuccess, success)
		gauge(d.lastExitCode, float64(exit))
	case prev.hasRun:
		gauge(d.lastRunTime, prev.runTime)
		gauge(d.lastSuccess, prev.success)
		if prev.hasExit {
			gauge(d.lastExitCode, prev.exitCode)
		}
	}
	switch {
	case finished && exit == 0:
		gauge(d.lastOK, float64(end.UnixMilli())/1e3)
	case prev.hasSuccess:
		gauge(d.lastOK, prev.successTime)
	}
}
