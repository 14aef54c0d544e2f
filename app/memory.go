package app

import (
	"runtime/debug"

	"github.com/bulkload/bulkload/source"
)

// memoryBudget keeps validate's whole process near validateMemory. The
// duplicate-leadId index, the one thing that grows with the file, lives
// outside the Go heap (mapper.Mapper.IndexMemory), so the heap itself stays a
// few MiB, and GOGC's headroom, a percentage of that, would run the collector
// every couple of thousand rows, costing more CPU than the work itself.
// Instead the collector is off until the Go runtime's memory reaches its
// limit (GOMEMLIMIT): maxGoMemory, less as the index grows, never below
// minGoMemory, each plus perWorkerMemory for each of the source's workers
// (each holds batches and makes garbage: without that share, many workers
// kept the collector running all the time). The figures behind these
// bounds are in bench/README.md. A GOGC or
// GOMEMLIMIT the user set wins. These are the runtime's process-wide
// settings: set here, for validate only, and restored when it returns.
type memoryBudget struct {
	on        bool
	min, max  int64 // the Go runtime's bounds, the workers counted in
	gcPercent int
	limit     int64
	last      int64
}

const (
	// validateMemory is what index and Go runtime may hold together: the
	// aim is a peak RSS of 64 MiB, and the program's own pages (binary
	// text and data) come on top. 55 was chosen by measuring its
	// neighbours at 5M rows (bench/README.md): less costs CPU, more
	// passes the aim.
	validateMemory = 55 << 20
	// maxGoMemory is the most the Go runtime gets: more makes collections
	// rarer but no cheaper in total beyond this.
	maxGoMemory = 22 << 20
	// minGoMemory is the least the Go runtime gets, heap and stacks: room
	// for the batches in flight and the results file's buffers.
	minGoMemory = 8 << 20
	// perWorkerMemory is added to both bounds for each of the source's
	// workers (source.DefaultWorkers).
	perWorkerMemory = 1 << 20
)

// newMemoryBudget sets validate's memory budget, unless the user set GOGC
// or GOMEMLIMIT; restore gives the runtime its settings back.
func newMemoryBudget(getenv func(string) string) *memoryBudget {
	b := &memoryBudget{}
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return b
	}
	b.on = true
	workers := int64(source.DefaultWorkers())
	b.min, b.max = minGoMemory+workers*perWorkerMemory, maxGoMemory+workers*perWorkerMemory
	b.limit = debug.SetMemoryLimit(b.max)
	b.gcPercent = debug.SetGCPercent(-1)
	b.last = b.max
	return b
}

// update gives the Go runtime what the index leaves of the budget.
func (b *memoryBudget) update(indexBytes int) {
	if !b.on {
		return
	}
	limit := min(b.max, max(b.min, validateMemory-int64(indexBytes)))
	if limit < b.last-1<<20 || limit > b.last+1<<20 {
		debug.SetMemoryLimit(limit)
		b.last = limit
	}
}

func (b *memoryBudget) restore() {
	if b.on {
		debug.SetGCPercent(b.gcPercent)
		debug.SetMemoryLimit(b.limit)
	}
}

// uploadGoMemory is the soft limit of the Go runtime's memory during an
// upload (heap and goroutine stacks; the duplicate-leadId index lives
// outside it). Each call in flight holds a worker's stack, a connection's
// buffers and its two goroutines, and makes garbage as it goes: with many
// calls in flight (--max-concurrency 512) the collector's default pace
// (GOGC 100) lets the process grow past the 64 MiB RSS aim; with this limit
// it collects sooner once the runtime nears it (measured with
// bench/conc.sh's mem512; figures in bench/README.md). Under it, GOGC's
// pace is unchanged: a run with fewer calls in flight never reaches it and
// pays nothing.
const uploadGoMemory = 44 << 20

// limitUploadMemory sets the soft memory limit of an upload, unless the
// user set GOGC or GOMEMLIMIT; the returned function restores it.
func limitUploadMemory(getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetMemoryLimit(uploadGoMemory)
	return func() { debug.SetMemoryLimit(old) }
}
