package pace

import (
	"container/heap"
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"
)

// queueModel is a service with a capacity: cap requests served at once,
// each for lat plus a uniform jitter in [-jit, +jit], the rest waiting in a
// FIFO queue (queueLimit > 0: a request that finds it full is shed). Its
// capacity and latency may change at a time. It runs on a simulated clock,
// driven by runModel.
type queueModel struct {
	cap, queueLimit int
	lat, jit        time.Duration
	changeAt        time.Duration // 0: never
	capAfter        int
	latAfter        time.Duration
	latUntil        time.Duration // latAfter ends then (0: never)
	// extra is a latency drawn for each call on top, whatever the load
	// (a slow credit bureau behind some calls); nil: none.
	extra func(*rand.Rand) time.Duration
	// fail503 is the share of calls answered 503 at once, whatever the
	// load (one bad backend behind a load balancer).
	fail503 float64
	// calls > 0 is a job of that many calls (a short file): the client
	// sends no more, and the run ends with the last answer.
	calls int
	rnd   *rand.Rand
	// opening > 0 is --rate auto's opening round (pace.Adaptive): the
	// first opening calls go at once, and the next wait until those are
	// answered (or a second has passed), then go together.
	opening int
	// submitShare > 0 makes the calls rows': each is a createLead, and
	// that share of them (qualified leads) is followed by a submitLead of
	// the same service time, the same capacity; a call sent is the
	// submitLead of a row waiting for one or a new row's createLead, one
	// or the other at random (the workers race for the places). Before, in
	// every model, the calls were of one operation. Its draws are
	// opRnd's, so that the calls' latencies are rnd's in the order sent,
	// whatever the mix (a fixed and an auto run of a draw see the same).
	submitShare float64
	opRnd       *rand.Rand
}

// bimodal draws fast, or slow for a random share of the calls.
func bimodal(fast, slow time.Duration, share float64) func(*rand.Rand) time.Duration {
	return func(r *rand.Rand) time.Duration {
		if r.Float64() < share {
			return slow
		}
		return fast
	}
}

// pareto draws at least min, with tail index alpha.
func pareto(min time.Duration, alpha float64) func(*rand.Rand) time.Duration {
	return func(r *rand.Rand) time.Duration {
		return time.Duration(float64(min) / math.Pow(1-r.Float64(), 1/alpha))
	}
}

// lognormal draws around median with shape sigma.
func lognormal(median time.Duration, sigma float64) func(*rand.Rand) time.Duration {
	return func(r *rand.Rand) time.Duration {
		return time.Duration(float64(median) * math.Exp(sigma*r.NormFloat64()))
	}
}

// modelEvent is an answer due at t to a request sent at start.
type modelEvent struct {
	t, start time.Duration
	status   int
	ticket   int64
	op       string // "" unless the model's calls are rows' (submitShare)
}

type eventHeap []modelEvent

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return h[i].t < h[j].t }
func (h eventHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)        { *h = append(*h, x.(modelEvent)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// modelRun is what runModel saw.
type modelRun struct {
	answered  []time.Duration // when each 2xx answer came
	waits     []time.Duration // queue wait of each request served, by when it was served
	waitAt    []time.Duration
	shed      int
	shedAt    []time.Duration // when each was shed
	limits    []int           // the limit at each whole second
	lowest    int             // the lowest limit from the change on (with one)
	inFlight  []int           // the calls in flight at each whole second
	undoneAt  []time.Duration // when each latency cut was undone
	done      time.Duration   // when the last call of a job of m.calls was answered
	finalSnap ConcurrencySnapshot
}

// throughput is 2xx answers a second over [from, to).
func (r modelRun) throughput(from, to time.Duration) float64 {
	n := 0
	for _, t := range r.answered {
		if t >= from && t < to {
			n++
		}
	}
	return float64(n) / (to - from).Seconds()
}

// shedIn is the requests shed in [from, to).
func (r modelRun) shedIn(from, to time.Duration) int {
	n := 0
	for _, t := range r.shedAt {
		if t >= from && t < to {
			n++
		}
	}
	return n
}

// meanWait is the mean queue wait of requests served in [from, to).
func (r modelRun) meanWait(from, to time.Duration) time.Duration {
	var sum time.Duration
	n := 0
	for i, t := range r.waitAt {
		if t >= from && t < to {
			sum += r.waits[i]
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / time.Duration(n)
}

// runModel runs an auto Concurrency against m for d of simulated time,
// with a client that always has another call to send.
func runModel(t *testing.T, m queueModel, d time.Duration, cfg ConcurrencyConfig) modelRun {
	t.Helper()
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var now time.Duration
	cfg.Now = func() time.Time { return epoch.Add(now) }
	c := NewConcurrency(cfg)
	var (
		run       modelRun
		events    eventHeap
		inService int
		queue     []modelEvent // arrivals
		sent      int
	)
	capNow := func() int {
		if m.changeAt > 0 && now >= m.changeAt {
			return m.capAfter
		}
		return m.cap
	}
	latency := func() time.Duration {
		l := m.lat
		if m.changeAt > 0 && now >= m.changeAt && m.latAfter > 0 && (m.latUntil == 0 || now < m.latUntil) {
			l = m.latAfter
		}
		if m.jit > 0 {
			l += time.Duration(m.rnd.Int64N(int64(2*m.jit))) - m.jit
		}
		if m.extra != nil {
			l += m.extra(m.rnd)
		}
		return l
	}
	serve := func(a modelEvent) {
		inService++
		run.waits = append(run.waits, now-a.start)
		run.waitAt = append(run.waitAt, now)
		a.t, a.status = now+latency(), http.StatusOK
		heap.Push(&events, a)
	}
	send := func(ticket int64, op string) {
		k := capNow()
		a := modelEvent{start: now, ticket: ticket, op: op}
		switch {
		case m.fail503 > 0 && m.rnd.Float64() < m.fail503:
			a.t, a.status = now+time.Millisecond, http.StatusServiceUnavailable
			heap.Push(&events, a)
		case k == 0 || (inService < k && len(queue) == 0):
			serve(a)
		case m.queueLimit > 0 && len(queue) >= m.queueLimit:
			run.shed++
			run.shedAt = append(run.shedAt, now)
			a.t, a.status = now+time.Millisecond, http.StatusServiceUnavailable
			heap.Push(&events, a)
		default:
			queue = append(queue, a)
		}
	}
	// The rows whose createLead was answered and whose submitLead waits
	// (submitShare), and the answers so far (opening).
	submits, answers := 0, 0
	// fill sends as many calls as the limit lets through, as the
	// workers waiting on Acquire would.
	fill := func() {
		for m.calls == 0 || sent < m.calls || submits > 0 {
			if m.opening > 0 && sent >= m.opening && answers < m.opening && now < time.Second {
				return // the opening round: the others wait for its answers
			}
			c.mu.Lock()
			free := len(c.queue) == 0 && c.inFlight < c.capLocked()
			var ticket int64
			if free {
				ticket = c.takeLocked()
			} else {
				c.bound = true
			}
			c.mu.Unlock()
			if !free {
				return
			}
			if m.submitShare == 0 {
				sent++
				send(ticket, "")
				continue
			}
			if submits > 0 && ((m.calls > 0 && sent >= m.calls) || m.opRnd.IntN(2) == 0) {
				submits--
				send(ticket, "submitLead")
				continue
			}
			sent++
			send(ticket, "createLead")
		}
	}
	nextSecond := time.Duration(0)
	fill()
	for now < d {
		if len(events) == 0 {
			if m.calls > 0 && sent == m.calls && submits == 0 {
				run.done = now
				break
			}
			t.Fatalf("no call in flight at %v", now)
		}
		ev := heap.Pop(&events).(modelEvent)
		for nextSecond <= ev.t && nextSecond < d {
			now = nextSecond
			l, n := c.Limits()
			run.limits = append(run.limits, l)
			run.inFlight = append(run.inFlight, n)
			nextSecond += time.Second
		}
		now = ev.t
		answers++
		if ev.status == http.StatusOK {
			inService--
			run.answered = append(run.answered, now)
			if ev.op == "createLead" && m.opRnd.Float64() < m.submitShare {
				submits++
			}
			for len(queue) > 0 && (capNow() == 0 || inService < capNow()) {
				a := queue[0]
				queue = queue[1:]
				serve(a)
			}
		} else if ev.op == "createLead" {
			sent-- // shed: the row's createLead goes again
		} else if ev.op == "submitLead" {
			submits++
		}
		c.Release(ev.ticket, Outcome{Start: epoch.Add(ev.start), Latency: now - ev.start, Status: ev.status, Op: ev.op}, true)
		if s := c.Snapshot(); s.UndoneCuts > len(run.undoneAt) {
			run.undoneAt = append(run.undoneAt, now)
		}
		if l, _ := c.Limits(); m.changeAt > 0 && now >= m.changeAt && (run.lowest == 0 || l < run.lowest) {
			run.lowest = l
		}
		fill()
	}
	run.finalSnap = c.Snapshot()
	return run
}

// TestConcurrencyModel runs the auto limit against modelled services: it
// must find the capacity (≥ 90% of K/L in the steady state), keep the
// queue inside the service short (≤ 20% of L), climb fast, follow a
// capacity that halves, and not collapse when the service slows by itself.
func TestConcurrencyModel(t *testing.T) {
	tests := []struct {
		name        string
		m           queueModel
		d           time.Duration
		cfg         ConcurrencyConfig
		aim         float64       // calls/s the steady state must reach 90% of
		maxWait     time.Duration // mean queue wait in the steady state at most
		climbBy     time.Duration // 90% of aim reached by then (0: not checked)
		limitIn     [2]int        // the final limit within
		steadyAfter time.Duration
	}{
		{name: "L=1s±0.2 K=64", m: queueModel{cap: 64, queueLimit: 64, lat: time.Second, jit: 200 * time.Millisecond},
			d: 60 * time.Second, aim: 64, maxWait: 200 * time.Millisecond, climbBy: 15 * time.Second, limitIn: [2]int{56, 80}, steadyAfter: 20 * time.Second},
		{name: "L=2s K=256: the default cap", m: queueModel{cap: 256, lat: 2 * time.Second, jit: 200 * time.Millisecond},
			d: 90 * time.Second, aim: 128, maxWait: 400 * time.Millisecond, limitIn: [2]int{230, 256}, steadyAfter: 40 * time.Second},
		{name: "L=20ms K=8", m: queueModel{cap: 8, lat: 20 * time.Millisecond},
			d: 30 * time.Second, aim: 400, maxWait: 4 * time.Millisecond, limitIn: [2]int{7, 10}, steadyAfter: 10 * time.Second},
		{name: "no capacity: up to the cap", m: queueModel{lat: 300 * time.Millisecond, jit: 100 * time.Millisecond},
			d: 30 * time.Second, aim: 256 / 0.3, limitIn: [2]int{256, 256}, steadyAfter: 10 * time.Second},
		{name: "far from the start: K=200", m: queueModel{cap: 200, queueLimit: 100, lat: 500 * time.Millisecond, jit: 100 * time.Millisecond},
			d: 60 * time.Second, cfg: ConcurrencyConfig{Max: 1000}, aim: 400, maxWait: 100 * time.Millisecond, limitIn: [2]int{180, 250}, steadyAfter: 30 * time.Second},
		{name: "small capacity K=2", m: queueModel{cap: 2, queueLimit: 8, lat: 100 * time.Millisecond, jit: 20 * time.Millisecond},
			d: 60 * time.Second, aim: 20, maxWait: 20 * time.Millisecond, limitIn: [2]int{2, 3}, steadyAfter: 30 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.m.rnd = rand.New(rand.NewPCG(1, 2))
			run := runModel(t, tc.m, tc.d, tc.cfg)
			steady := run.throughput(tc.steadyAfter, tc.d)
			wait := run.meanWait(tc.steadyAfter, tc.d)
			final := median(run.limits[int(tc.steadyAfter/time.Second):])
			t.Logf("steady %.1f/s (%.0f%% of %.0f), mean queue wait %v, median limit %d, shed %d, limits %v", steady, 100*steady/tc.aim, tc.aim, wait, final, run.shed, run.limits)
			if steady < 0.9*tc.aim {
				t.Errorf("steady state %.1f calls/s, want at least 90%% of %.0f", steady, tc.aim)
			}
			if tc.maxWait > 0 && wait > tc.maxWait {
				t.Errorf("mean queue wait in the service %v, want at most %v", wait, tc.maxWait)
			}
			if final < tc.limitIn[0] || final > tc.limitIn[1] {
				t.Errorf("median limit in the steady state %d, want within %v", final, tc.limitIn)
			}
			if tc.climbBy > 0 {
				if got := run.throughput(tc.climbBy-time.Second, tc.climbBy); got < 0.9*tc.aim {
					t.Errorf("%.1f calls/s in the second before %v, want 90%% of %.0f by then", got, tc.climbBy, tc.aim)
				}
			}
		})
	}
}

// median is the median of v (sorted in place).
func median(v []int) int {
	slices.Sort(v)
	return v[len(v)/2]
}

// TestConcurrencyModelChanges: a capacity that halves is followed within
// seconds, and a service that slows down by itself (latency doubles, no
// queue) does not make the limit collapse.
func TestConcurrencyModelChanges(t *testing.T) {
	t.Run("capacity halves", func(t *testing.T) {
		// conc.sh's halve, on several draws of the jitter: once the
		// capacity halves, the service's queue fills and it sheds every
		// call past it at once; each shed call's place went to the next
		// call, shed as fast, while the round's own calls waited in the
		// queue: one draw of four shed 6,642 calls (bench/conc.sh on 2
		// CPUs: 375 in 2 s, 15% of the run's answers).
		for seed := uint64(1); seed <= 8; seed++ {
			m := queueModel{cap: 64, queueLimit: 32, lat: time.Second, jit: 200 * time.Millisecond, changeAt: 25 * time.Second, capAfter: 32, rnd: rand.New(rand.NewPCG(seed, 4))}
			run := runModel(t, m, 45*time.Second, ConcurrencyConfig{})
			after := run.meanWait(30*time.Second, 45*time.Second)
			steady := run.throughput(30*time.Second, 45*time.Second)
			shed, ok := run.shedIn(25*time.Second, 45*time.Second), run.throughput(25*time.Second, 45*time.Second)*20
			all := len(run.answered) + run.shed
			t.Logf("seed %d: wait 30-45 s %v, steady %.1f/s, shed after the halving %d of %.0f, in the first 10 s %d, in all %d of %d, limits %v", seed, after, steady, shed, ok, run.shedIn(0, 10*time.Second), run.shed, all, run.limits)
			// bench/conc.sh's halve aims at 2% shed over the run. Slow
			// start's doubling at once, 64 -> 128 in flight against K
			// 64 and a queue of 32, shed 41 calls in every draw (2.0-2.7%
			// of the run with those after the halving, 0-13); one place
			// an answer past half the step, 6-11 (0.3-1.1%).
			if float64(run.shed) > 0.015*float64(all) {
				t.Errorf("seed %d: %d calls shed over the run (%d in the first 10 s), of %d: want at most 1.5%%", seed, run.shed, run.shedIn(0, 10*time.Second), all)
			}
			if after > 100*time.Millisecond {
				t.Errorf("seed %d: mean queue wait from 5 s after the halving %v, want at most 10%% of L", seed, after)
			}
			if steady < 0.9*32 {
				t.Errorf("seed %d: steady state after the halving %.1f calls/s, want 90%% of 32", seed, steady)
			}
			if float64(shed) > 0.03*ok {
				t.Errorf("seed %d: %d calls shed after the halving, against %.0f answered: want at most 3%%", seed, shed, ok)
			}
		}
	})
	t.Run("capacity halves: the cut stands", func(t *testing.T) {
		// K 64 -> 32 at 25 s, L 1 s: the cuts after the halving were
		// judged by the answers to the calls sent after them, which
		// waited behind a queue still growing (the capacity had just
		// fallen) and came no quicker, twice: the cut was undone, the
		// limit went back over the capacity and the queue with it. On
		// 0d751c1, over draws 1-8 of PCG(seed, 99): queue 64, ±0.2:
		// undone in draws 4, 5 and 6 (queue wait 516-728 ms from 5 s
		// after); queue 32, ±0.4: draw 7; and, with no undo, queue wait
		// 205-253 ms in draws 3 and 8 (queue 64), 7 (±0.4) and 5 (queue
		// 32, ±0.2): the base taken from rounds over the new capacity.
		// Queue 64, ±0.4, draws 1-16 of PCG(seed, 7): ac03887, which
		// judged the answers after a cut only against the calls sent
		// last before it, undid the cut in draw 14 (1,113 ms): the
		// halving had slowed those too. (Over draws 1-32 of PCG(seed, 7)
		// of these four shapes: 0d751c1 undone in 9 of 128, over 200 ms
		// in 32; ac03887 1 and 2; now none.)
		// bench/conc.sh's halve aims at a queue wait of at most 20% of L
		// over the run's last third.
		for _, sh := range []struct {
			name         string
			queue        int
			jit          time.Duration
			draws, seed2 uint64
		}{
			{"queue 32, L 1s ±0.2 (bench/conc.sh's halve)", 32, 200 * time.Millisecond, 8, 99},
			{"queue 32, L 1s ±0.4", 32, 400 * time.Millisecond, 8, 99},
			{"queue 64, L 1s ±0.2", 64, 200 * time.Millisecond, 8, 99},
			{"queue 64, L 1s ±0.4", 64, 400 * time.Millisecond, 16, 7},
		} {
			for seed := uint64(1); seed <= sh.draws; seed++ {
				m := queueModel{cap: 64, queueLimit: sh.queue, lat: time.Second, jit: sh.jit, changeAt: 25 * time.Second, capAfter: 32, rnd: rand.New(rand.NewPCG(seed, sh.seed2))}
				run := runModel(t, m, 45*time.Second, ConcurrencyConfig{})
				wait := run.meanWait(30*time.Second, 45*time.Second)
				t.Logf("%s, draw %d: undone at %v, queue wait 30-45 s %v, limits %v", sh.name, seed, run.undoneAt, wait, run.limits)
				for _, at := range run.undoneAt {
					if at >= m.changeAt {
						t.Errorf("%s, draw %d: a latency cut undone at %v, after the capacity halved at %v (limits by second %v)", sh.name, seed, at, m.changeAt, run.limits)
					}
				}
				if wait > 200*time.Millisecond {
					t.Errorf("%s, draw %d: mean queue wait over the last third (30-45 s) %v, want at most 20%% of L", sh.name, seed, wait)
				}
			}
		}
	})
	t.Run("capacity stays, the service slows by itself", func(t *testing.T) {
		// K 32, L 1 s -> 1.5 s at 20 s: the latency rises with no more
		// calls in the service's queue. The cuts it draws are undone
		// (the latency at the lower limit is no lower), and the limit
		// goes back to the capacity. On 0d751c1 every round past the
		// threshold cut again while the first cut was checked: draws 1
		// and 6 of PCG(seed, 99) went from 34 to 6 and to 3, undone
		// only at 45 s (24% and 51% of K/L from 40 s). Over 48 draws,
		// a window 4% slower than the last by chance cut again (draw 36:
		// 32 -> 19 -> 12 until the undo at 42 s, 74%).
		const draws = 48
		var sum float64
		for seed := uint64(1); seed <= draws; seed++ {
			m := queueModel{cap: 32, queueLimit: 32, lat: time.Second, jit: 200 * time.Millisecond, changeAt: 20 * time.Second, capAfter: 32, latAfter: 1500 * time.Millisecond, rnd: rand.New(rand.NewPCG(seed, 99))}
			run := runModel(t, m, 60*time.Second, ConcurrencyConfig{})
			got := run.throughput(40*time.Second, 60*time.Second) / (32 / 1.5)
			sum += got
			t.Logf("draw %d: %.0f%% of K/L from 40 s, undone at %v, limits %v", seed, 100*got, run.undoneAt, run.limits)
			if got < 0.75 {
				t.Errorf("draw %d: %.0f%% of K/L = 21.3/s from 40 s, want at least 75%%", seed, 100*got)
			}
		}
		if sum/draws < 0.9 {
			t.Errorf("%.0f%% of K/L over %d draws from 40 s, want at least 90%%", 100*sum/draws, draws)
		}
	})
	t.Run("the client stalls", func(t *testing.T) {
		// A fast service (K 8, L 20 ms) whose answers are late for
		// 300 ms, as when the client's machine is busy with other work:
		// latency cuts in a row would take the limit from 8 to 1; within
		// concCutSpan they go no lower than half.
		m := queueModel{cap: 8, lat: 20 * time.Millisecond, changeAt: 10 * time.Second, capAfter: 8, latAfter: 100 * time.Millisecond, latUntil: 10*time.Second + 300*time.Millisecond, rnd: rand.New(rand.NewPCG(7, 8))}
		run := runModel(t, m, 20*time.Second, ConcurrencyConfig{})
		steady := run.throughput(12*time.Second, 20*time.Second)
		t.Logf("lowest limit from the stall on %d, steady after %.1f/s, limits %v", run.lowest, steady, run.limits)
		if run.lowest < 4 {
			t.Errorf("lowest limit after a stall of 300 ms %d, want at least half of 8", run.lowest)
		}
		if steady < 0.9*400 {
			t.Errorf("steady state after the stall %.1f calls/s, want 90%% of 400", steady)
		}
	})
	t.Run("service slows by itself", func(t *testing.T) {
		m := queueModel{lat: 200 * time.Millisecond, jit: 20 * time.Millisecond, changeAt: 20 * time.Second, latAfter: 400 * time.Millisecond, rnd: rand.New(rand.NewPCG(5, 6))}
		run := runModel(t, m, 60*time.Second, ConcurrencyConfig{Max: 64})
		final := median(run.limits[50:])
		t.Logf("limits %v", run.limits)
		if final < 48 {
			t.Errorf("final limit %d after the service's latency doubled without a queue, want it back near the cap 64", final)
		}
	})
}

// TestConcurrencyModelSlowStartCut: the cut that ends slow start past a
// capacity (K 64, queue 64, L 1 s ±0.4: 64 -> 128 in flight) stands. Its
// round's calls were sent as the queue began, its mean under the
// latency at 128 once the queue had built; the calls after the cut, at
// 84, were no quicker than that mean, twice, and the cut was undone,
// back to 128, the rounds at the base dropped with it (a91a4da: draw 10
// of PCG(seed, 123), limits 128 -> 84 -> 128 -> 87-105, queue wait
// 421 ms over 20-40 s; on bench/conc.sh's halve64 against the real
// client, the same at 9-14 s; 0d751c1, which cut again at 84, undid a
// cut at 16 s in draw 1). The check now compares them with the calls
// sent last before the cut.
func TestConcurrencyModelSlowStartCut(t *testing.T) {
	for seed := uint64(1); seed <= 16; seed++ {
		m := queueModel{cap: 64, queueLimit: 64, lat: time.Second, jit: 400 * time.Millisecond, rnd: rand.New(rand.NewPCG(seed, 123))}
		run := runModel(t, m, 40*time.Second, ConcurrencyConfig{})
		wait := run.meanWait(20*time.Second, 40*time.Second)
		t.Logf("draw %d: undone at %v, queue wait 20-40 s %v, limits %v", seed, run.undoneAt, wait, run.limits)
		if len(run.undoneAt) > 0 && run.undoneAt[0] < 20*time.Second {
			t.Errorf("draw %d: a latency cut undone at %v, in the first 20 s (limits by second %v)", seed, run.undoneAt[0], run.limits)
		}
		if wait > 200*time.Millisecond {
			t.Errorf("draw %d: mean queue wait over 20-40 s %v, want at most 20%% of L", seed, wait)
		}
	}
}

// TestConcurrencyFixed: a fixed limit lets exactly N attempts in at once,
// the next waits until one gives its place back, and a waiter whose
// context ends leaves the line.
func TestConcurrencyFixed(t *testing.T) {
	c := NewConcurrency(ConcurrencyConfig{Fixed: 2})
	ctx := context.Background()
	for range 2 {
		if _, err := c.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan error, 1)
	go func() { _, err := c.Acquire(ctx); got <- err }()
	cctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan error, 1)
	go func() { _, err := c.Acquire(cctx); cancelled <- err }()
	for c.Snapshot().Waiting < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-cancelled; err == nil {
		t.Fatal("Acquire with a cancelled context returned nil")
	}
	c.Release(0, Outcome{Status: 200, Latency: time.Second}, true)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	s := c.Snapshot()
	if s.Auto || s.Limit != 2 || s.InFlight != 2 || s.Waiting != 0 || s.PeakInFlight != 2 {
		t.Errorf("snapshot %+v, want fixed 2, 2 in flight, none waiting", s)
	}
	if l, n := c.Limits(); l != 2 || n != 2 {
		t.Errorf("Limits() = %d, %d, want 2, 2", l, n)
	}
}

// TestConcurrencyModelShapes runs the auto limit against services whose
// slow calls and 503s do not depend on the load (a slow credit bureau
// behind a random share of the calls, heavy tails, one bad backend behind
// a load balancer), alone and behind a capacity: auto must reach 90% of
// the best fixed limit's throughput (2xx answers a second after the
// climb), measured alike, and, with no capacity behind them, never fall
// back under its start once climbed. These are the figures of
// app's TestConcurrencyAutoRandomShapes, in simulated time, where
// the host's load plays no part.
func TestConcurrencyModelShapes(t *testing.T) {
	const d, from = 120 * time.Second, 10 * time.Second
	tests := []struct {
		name string
		m    queueModel
	}{
		{"bimodal 50ms/2s 10%", queueModel{extra: bimodal(50*time.Millisecond, 2*time.Second, 0.1)}},
		{"bimodal 50ms/2s 10%, K=32", queueModel{cap: 32, extra: bimodal(50*time.Millisecond, 2*time.Second, 0.1)}},
		{"lognormal 100ms σ1", queueModel{extra: lognormal(100*time.Millisecond, 1)}},
		{"lognormal 100ms σ1, K=64", queueModel{cap: 64, extra: lognormal(100*time.Millisecond, 1)}},
		// concbench's pareto: on the 16-core run auto was at its cap of
		// 256 and reached 78.8% of a fixed 128 beside 11 other runs on
		// the same CPUs; with no CPU in the loop, the cap is the best.
		{"pareto 50ms α1.5", queueModel{extra: pareto(50*time.Millisecond, 1.5)}},
		{"10% 503, L=50ms", queueModel{lat: 50 * time.Millisecond, fail503: 0.1}},
		{"20% 503, L=50ms", queueModel{lat: 50 * time.Millisecond, fail503: 0.2}},
		{"10% 503, L=100ms K=32", queueModel{cap: 32, lat: 100 * time.Millisecond, jit: 10 * time.Millisecond, fail503: 0.1}},
		{"20% 503, bimodal, K=16", queueModel{cap: 16, fail503: 0.2, extra: bimodal(50*time.Millisecond, 2*time.Second, 0.1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			best, bestN := 0.0, 0
			for _, n := range []int{16, 32, 64, 256} {
				m := tc.m
				m.rnd = rand.New(rand.NewPCG(11, uint64(n)))
				if got := runModel(t, m, d, ConcurrencyConfig{Fixed: n}).throughput(from, d); got > best {
					best, bestN = got, n
				}
			}
			m := tc.m
			m.rnd = rand.New(rand.NewPCG(11, 1))
			run := runModel(t, m, d, ConcurrencyConfig{})
			got := run.throughput(from, d)
			t.Logf("auto %.1f/s (%.0f%% of fixed %d: %.1f/s), cuts %d latency (%d undone), %d pressure, limits %v", got, 100*got/best, bestN, best, run.finalSnap.LatencyCuts, run.finalSnap.UndoneCuts, run.finalSnap.PressureCuts, run.limits)
			if got < 0.9*best {
				t.Errorf("auto %.1f calls/s, want at least 90%% of the best fixed limit's (%d: %.1f/s)", got, bestN, best)
			}
			// Without a capacity nothing is a queue: once climbed, the
			// limit never falls back under its start (the e2e runs of
			// issue 27 ended at 1 with 503s, at 5-17 with slow calls).
			if low := slices.Min(run.limits[int(from/time.Second):]); tc.m.cap == 0 && low < DefaultStartConcurrency {
				t.Errorf("lowest limit after the climb %d, want at least the start %d: the service has no capacity to find", low, DefaultStartConcurrency)
			}
		})
	}
}

// TestConcurrencyStartsSettled: a resume starts auto at the limit the
// earlier run settled at, past the climb: no doubling into a queue, and
// the steady part begins with the first call.
func TestConcurrencyStartsSettled(t *testing.T) {
	m := queueModel{cap: 48, queueLimit: 48, lat: 200 * time.Millisecond, jit: 20 * time.Millisecond, rnd: rand.New(rand.NewPCG(9, 10))}
	run := runModel(t, m, 20*time.Second, ConcurrencyConfig{Start: 46, Settled: true})
	if run.limits[0] != 46 || slices.Max(run.limits) > 60 {
		t.Errorf("limits by second %v, want a start at 46 and no climb past the capacity 48", run.limits)
	}
	if s := run.finalSnap; s.SlowStart || s.Steady < s.Since || s.SteadyLimit < 40 || s.SteadyLimit > 56 {
		t.Errorf("snapshot %+v, want no slow start, a steady part of the whole run and a median limit near 48", s)
	}
	if got := run.throughput(0, 20*time.Second); got < 0.9*48/0.2 {
		t.Errorf("%.1f calls/s over the run, want 90%% of K/L = 240 from the start", got)
	}
}

// TestConcurrencyModelShortRuns: a short file (400 calls) against a
// service whose slow calls are random, heavy-tailed or bimodal, with no
// capacity: auto, from its start of 8, must take at most 1/0.9 of the
// time a fixed 32 takes over the whole run, the draws together (each
// draw gives both the same latencies, call by call), and never cut under
// its start. On the parent of this test's commit a handful of calls per
// level looked like a queue: the first round's quickest quarter (2 calls
// of 8) made the base, every round after was past it, and the limit went
// to 1-4 for seconds (bulkload sim, pareto:50ms,1.5, 400 rows: a median
// of 5 in flight, 74% of --concurrency 32).
func TestConcurrencyModelShortRuns(t *testing.T) {
	const calls, draws = 400, 8
	tests := []struct {
		name  string
		extra func(*rand.Rand) time.Duration
	}{
		{"pareto 50ms α1.5", pareto(50*time.Millisecond, 1.5)},
		{"lognormal 100ms σ1", lognormal(100*time.Millisecond, 1)},
		{"lognormal 100ms σ0.5", lognormal(100*time.Millisecond, 0.5)},
		{"bimodal 50ms/2s 10%", bimodal(50*time.Millisecond, 2*time.Second, 0.1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var fixed, auto time.Duration
			for seed := uint64(1); seed <= draws; seed++ {
				m := queueModel{extra: tc.extra, calls: calls, rnd: rand.New(rand.NewPCG(seed, calls))}
				f := runModel(t, m, 10*time.Minute, ConcurrencyConfig{Fixed: 32})
				m.rnd = rand.New(rand.NewPCG(seed, calls))
				a := runModel(t, m, 10*time.Minute, ConcurrencyConfig{})
				fixed, auto = fixed+f.done, auto+a.done
				t.Logf("draw %d: fixed 32 %v, auto %v (%.0f%%), %d latency cuts (%d undone), limits %v, in flight %v", seed, f.done, a.done, 100*f.done.Seconds()/a.done.Seconds(), a.finalSnap.LatencyCuts, a.finalSnap.UndoneCuts, a.limits, a.inFlight)
				if low := slices.Min(a.limits); low < DefaultStartConcurrency {
					t.Errorf("draw %d: the limit fell to %d, under its start %d: the service has no capacity to find (limits by second %v)", seed, low, DefaultStartConcurrency, a.limits)
				}
			}
			if r := fixed.Seconds() / auto.Seconds(); r < 0.9 {
				t.Errorf("%d draws of %d calls took %v with auto, %v with a fixed 32: %.0f%%, want at least 90%%", draws, calls, auto, fixed, 100*r)
			}
		})
	}
}

// TestConcurrencyModelSmallCapacityStart: a start above a capacity of 2
// is cut in the first rounds, when the rows' calls are of two operations
// and --rate auto's opening sends the second round in one burst, as
// bulkload sim --capacity 2 --queue-limit 8 with 200 ms calls and 60 rows
// is met (bench/short.sh): the first round of 8 createLeads, held, then 8
// calls at once, the submitLeads of the rows it created (their share,
// 0.6, as leadsim's qualified leads) and new rows' createLeads at random.
// On the parent of this test's commit the second round was judged on its
// createLeads alone: 3 or 4 of 8 that found the first places showed no
// staircase, slow start went on, and the run sat at 8-10 in flight behind
// a queue of 6-8, shedding (draws 11, 14 and 23 of these 24; 35 of 200,
// the real client 1 run in 7).
func TestConcurrencyModelSmallCapacityStart(t *testing.T) {
	const calls, draws = 60, 24
	for seed := uint64(1); seed <= draws; seed++ {
		m := queueModel{cap: 2, queueLimit: 8, lat: 200 * time.Millisecond, calls: calls, opening: 8, submitShare: 0.6,
			rnd: rand.New(rand.NewPCG(seed, calls)), opRnd: rand.New(rand.NewPCG(seed, 1))}
		a := runModel(t, m, 10*time.Minute, ConcurrencyConfig{})
		t.Logf("draw %d: %v, %d latency cuts (%d undone), %d shed, limits %v, in flight %v", seed, a.done, a.finalSnap.LatencyCuts, a.finalSnap.UndoneCuts, a.shed, a.limits, a.inFlight)
		if a.finalSnap.LatencyCuts == 0 || slices.Min(a.limits[:6]) >= DefaultStartConcurrency {
			t.Errorf("draw %d: %d latency cuts, limits by second %v: want the start of %d cut within 5 s against a capacity of 2", seed, a.finalSnap.LatencyCuts, a.limits, DefaultStartConcurrency)
		}
	}
}

// TestConcurrencyModelShortRunsMixed: TestConcurrencyModelShortRuns'
// shapes with the rows' calls of TestConcurrencyModelSmallCapacityStart
// (a submitLead after 0.6 of the createLeads, the same service time, and
// --rate auto's opening round): no capacity to find, and auto takes at
// most 1/0.9 of a fixed 32's time, the draws together. A held first
// round whose second round could not tell (carryHeldLocked) costs such a
// run nothing: slow start goes on while the next round tells.
func TestConcurrencyModelShortRunsMixed(t *testing.T) {
	const calls, draws = 400, 40
	for _, tc := range []struct {
		name  string
		extra func(*rand.Rand) time.Duration
	}{
		{"pareto 50ms α1.5", pareto(50*time.Millisecond, 1.5)},
		{"lognormal 100ms σ1", lognormal(100*time.Millisecond, 1)},
		{"lognormal 100ms σ0.5", lognormal(100*time.Millisecond, 0.5)},
		{"bimodal 50ms/2s 10%", bimodal(50*time.Millisecond, 2*time.Second, 0.1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fixed, auto time.Duration
			for seed := uint64(1); seed <= draws; seed++ {
				m := queueModel{extra: tc.extra, calls: calls, opening: 8, submitShare: 0.6, rnd: rand.New(rand.NewPCG(seed, calls)), opRnd: rand.New(rand.NewPCG(seed, 1))}
				f := runModel(t, m, 10*time.Minute, ConcurrencyConfig{Fixed: 32})
				m.rnd, m.opRnd = rand.New(rand.NewPCG(seed, calls)), rand.New(rand.NewPCG(seed, 1))
				a := runModel(t, m, 10*time.Minute, ConcurrencyConfig{})
				fixed, auto = fixed+f.done, auto+a.done
				t.Logf("draw %d: fixed 32 %v, auto %v (%.0f%%), %d latency cuts (%d undone), limits %v", seed, f.done, a.done, 100*f.done.Seconds()/a.done.Seconds(), a.finalSnap.LatencyCuts, a.finalSnap.UndoneCuts, a.limits)
			}
			r := fixed.Seconds() / auto.Seconds()
			t.Logf("%d draws: auto %v, fixed 32 %v: %.1f%%", draws, auto, fixed, 100*r)
			if r < 0.9 {
				t.Errorf("%d draws of %d rows took %v with auto, %v with a fixed 32: %.0f%%, want at least 90%%", draws, calls, auto, fixed, 100*r)
			}
		})
	}
}
