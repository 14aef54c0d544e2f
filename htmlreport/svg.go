package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/bulkload/bulkload/summary"
)

// Chart geometry, in the SVG's own units: the page scales it to its width.
const (
	chartW, chartH = 720, 190
	padL, padR     = 56, 12
	padT, padB     = 14, 28
	barRowH        = 22
	barLabelW      = 150
)

// esc escapes text for SVG and HTML.
func esc(s string) string { return template.HTMLEscapeString(s) }

// niceStep is the axis step for a range of span over at most n steps: 1,
// 2 or 5 times a power of ten, so that every tick is a round number.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) || n < 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(span/float64(n))))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(m*p) <= float64(n)+1e-9 {
			return m * p
		}
	}
	return 10 * p
}

// yTicks are the value axis's ticks for values up to vmax: 0 and round
// steps (niceStep, at most 5) up to the first tick at or above vmax.
func yTicks(vmax float64) []float64 {
	if vmax <= 0 || math.IsNaN(vmax) || math.IsInf(vmax, 0) {
		vmax = 1
	}
	step := niceStep(vmax, 5)
	var out []float64
	for i := 0; ; i++ {
		v := float64(i) * step
		out = append(out, v)
		if v >= vmax-step*1e-9 {
			return out
		}
	}
}

// tickText writes a value axis's tick: as many decimals as its step needs
// (0.2 steps: "0.4"; 2.5 is never a tick), thousands separated.
func tickText(v, step float64) string {
	dec := 0
	if step < 1 && v != 0 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if dec == 0 {
		return group(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// timeSteps are the time axis's steps, in seconds: round to a reader of
// clocks (15 s, 30 s, 5 min, 6 h), under a second for a short run.
var timeSteps = []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400}

// timeTicks are the time axis's ticks over span seconds: every multiple of
// the smallest step of timeSteps that gives at most 6 intervals, so that
// no two ticks read the same.
func timeTicks(span float64) (ticks []float64, step float64) {
	step = timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if span/s <= 6 {
			step = s
			break
		}
	}
	for i := 0; float64(i)*step <= span+step*1e-9; i++ {
		ticks = append(ticks, float64(i)*step)
	}
	return ticks, step
}

// clockTick writes a time axis tick: m:ss or h:mm:ss, with tenths of a
// second when the step is under a second (0:01.5).
func clockTick(sec, step float64) string {
	if step >= 1 {
		return clock(sec)
	}
	tenths := int(math.Round(sec * 10))
	return fmt.Sprintf("%d:%02d.%d", tenths/600, tenths/10%60, tenths%10)
}

// num formats a figure for an axis or a label: whole numbers with
// thousands separators, small ones with one decimal.
func num(v float64) string {
	if v != math.Trunc(v) && math.Abs(v) < 100 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return group(int64(math.Round(v)))
}

// group writes n with thousands separators: 1234567 is "1,234,567".
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// clock formats seconds since the start as m:ss or h:mm:ss.
func clock(sec float64) string {
	s := int(math.Round(sec))
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// series is one line of a line chart.
type series struct {
	name  string
	class string // CSS class: its colour and dash
	ys    []float64
	// peak, when set, is the legend's peak: the summary's own figure where
	// the series is a per-interval mean of it (calls in flight), so that
	// the page and the summary say the same.
	peak *float64
}

// lineChart draws series over the timeline's samples, with marks on the
// time axis: a line for an instant, a band for an outage. Each series is
// one path; its points are the samples' midpoints.
func lineChart(id, title, unit string, tl *summary.Timeline, ss []series) template.HTML {
	span := 0.0
	if n := len(tl.Samples); n > 0 {
		last := tl.Samples[n-1]
		span = last.T + last.Seconds
	}
	for _, m := range tl.Marks {
		span = max(span, m.At+m.Seconds)
	}
	span = max(span, 1)
	ymax := 0.0
	for _, s := range ss {
		for _, y := range s.ys {
			if !math.IsNaN(y) {
				ymax = max(ymax, y)
			}
		}
	}
	yt := yTicks(ymax)
	ymax = yt[len(yt)-1]
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	x := func(t float64) float64 { return padL + plotW*t/span }
	y := func(v float64) float64 { return padT + plotH*(1-v/ymax) }

	var b strings.Builder
	fmt.Fprintf(&b, `<figure class="chart" id="%s"><figcaption>%s <span class="unit">(%s)</span></figcaption>`, id, esc(title), esc(unit))
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH, esc(title))
	// Grid and axes: round values, round times, no tick twice.
	for _, v := range yt {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padL, chartW-padR, y(v), y(v))
		fmt.Fprintf(&b, `<text class="axis ytick" x="%d" y="%.1f" text-anchor="end">%s</text>`, padL-4, y(v)+4, esc(tickText(v, yt[1])))
	}
	ticks, step := timeTicks(span)
	for _, t := range ticks {
		anchor := "middle"
		if x(t) > chartW-padR-24 {
			anchor = "end" // the last tick, at the right edge: inside the chart
		}
		fmt.Fprintf(&b, `<text class="axis xtick" x="%.1f" y="%d" text-anchor="%s">%s</text>`, x(t), chartH-8, anchor, clockTick(t, step))
	}
	// Marks under the lines.
	for i, m := range tl.Marks {
		if m.Seconds > 0 {
			fmt.Fprintf(&b, `<rect class="mark band %s" x="%.1f" y="%d" width="%.1f" height="%.1f"><title>%s</title></rect>`,
				esc(m.Kind), x(m.At), padT, max(x(m.At+m.Seconds)-x(m.At), 1.5), plotH, esc(markText(m)))
		} else {
			fmt.Fprintf(&b, `<line class="mark %s" x1="%.1f" x2="%.1f" y1="%d" y2="%.1f"><title>%s</title></line>`,
				esc(m.Kind), x(m.At), x(m.At), padT, padT+plotH, esc(markText(m)))
		}
		fmt.Fprintf(&b, `<text class="marklabel" x="%.1f" y="%d">%d</text>`, x(m.At)+2, padT+9, i+1)
	}
	// The series.
	for _, s := range ss {
		// NaN is a gap (no value that interval): the line breaks there.
		var d strings.Builder
		pen := false
		for i, v := range s.ys {
			if math.IsNaN(v) {
				pen = false
				continue
			}
			smp := tl.Samples[i]
			cmd := 'L'
			if !pen {
				cmd = 'M'
			}
			fmt.Fprintf(&d, "%c%.1f,%.1f", cmd, x(smp.T+smp.Seconds/2), y(v))
			if !pen && (i+1 == len(s.ys) || math.IsNaN(s.ys[i+1])) {
				d.WriteString("h2") // a lone point: a short flat line, visible
			}
			pen = true
		}
		if d.Len() > 0 {
			fmt.Fprintf(&b, `<path class="series %s" d="%s"><title>%s</title></path>`, s.class, d.String(), esc(s.name))
		}
	}
	b.WriteString(`</svg>`)
	// The legend, as text: it prints and reads without colour.
	b.WriteString(`<ul class="legend">`)
	for _, s := range ss {
		peak := 0.0
		for _, v := range s.ys {
			if !math.IsNaN(v) {
				peak = max(peak, v)
			}
		}
		if s.peak != nil {
			peak = *s.peak
		}
		fmt.Fprintf(&b, `<li><span class="key %s"></span>%s (peak %s)</li>`, s.class, esc(s.name), esc(num(peak)))
	}
	b.WriteString(`</ul></figure>`)
	return template.HTML(b.String())
}

// markText is a mark in words, for its tooltip and the list of marks.
func markText(m summary.Mark) string {
	t := clock(m.At)
	if m.Seconds > 0 {
		t += "-" + clock(m.At+m.Seconds)
	}
	return t + " " + m.Kind + ": " + m.Note
}

// bar is one bar of a bar chart.
type bar struct {
	label string
	key   string // data-k: the summary JSON key of its value, if any
	n     float64
	text  string // the value as shown
	class string
}

// barChart draws horizontal bars, labelled, with their values.
func barChart(id, title string, bars []bar) template.HTML {
	h := padT + barRowH*len(bars) + 6
	peak := 0.0
	for _, b := range bars {
		peak = max(peak, b.n)
	}
	if peak == 0 {
		peak = 1
	}
	plotW := float64(chartW - barLabelW - padR - 180)
	var b strings.Builder
	fmt.Fprintf(&b, `<figure class="chart" id="%s"><figcaption>%s</figcaption>`, id, esc(title))
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, chartW, h, esc(title))
	for i, br := range bars {
		top := padT + i*barRowH
		w := plotW * br.n / peak
		if br.n > 0 {
			w = max(w, 1.5)
		}
		fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="end">%s</text>`, barLabelW-6, top+15, esc(br.label))
		fmt.Fprintf(&b, `<rect class="bar %s" x="%d" y="%d" width="%.1f" height="%d"><title>%s: %s</title></rect>`, br.class, barLabelW, top+3, w, barRowH-6, esc(br.label), esc(br.text))
		fmt.Fprintf(&b, `<text class="value" x="%.1f" y="%d">%s</text>`, float64(barLabelW)+w+6, top+15, esc(br.text))
	}
	b.WriteString(`</svg></figure>`)
	return template.HTML(b.String())
}
