#!/usr/bin/env bash
# bench/cpu.sh: the client's CPU per 10,000 createLead calls against bare
# net/http (issue 27's aim: at most 1.3x), from `go test ./submitter -bench
# ClientCPU10k` (the simulator in a child process; each pair runs the
# Client's 10,000 calls, then bare net/http's): PAIRS interleaved pairs
# (default 5) of each test binary given, alternating binaries, and a table
# of the medians: CPU s per 10k calls, allocations and bytes per call, and
# the client/bare ratio per pair and its median.
#
#   bench/cpu.sh                                  # builds this checkout's test binary
#   bench/cpu.sh base.test new.test               # compare prebuilt binaries, interleaved
#   PAIRS=7 bench/cpu.sh a.test b.test
#
# Build a binary with `CGO_ENABLED=0 go test -c -o X.test ./submitter` (a
# static one runs on a machine without Go). Output in bench/out/cpu-*.txt
# (OUT_DIR=DIR: there).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
OUT=${OUT_DIR:-bench/out}
mkdir -p "$OUT"
BINS=("$@")
if [[ ${#BINS[@]} -eq 0 ]]; then
  echo "== build $OUT/submitter.test" >&2
  CGO_ENABLED=0 go test -c -o "$OUT/submitter.test" ./submitter
  BINS=("$OUT/submitter.test")
fi
PAIRS=${PAIRS:-5}
echo "== bench/cpu.sh on $(nproc 2>/dev/null || echo ?) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?), $(date -u +%FT%TZ)" >&2
for b in "${BINS[@]}"; do : > "$OUT/cpu-$(basename "$b").txt"; done
for i in $(seq "$PAIRS"); do
  for b in "${BINS[@]}"; do
    "$b" -test.run '^$' -test.bench 'ClientCPU10k' -test.benchtime 1x -test.count 1 2>&1 |
      grep '^BenchmarkClientCPU10k' | tee -a "$OUT/cpu-$(basename "$b").txt" >&2
  done
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)" >&2
printf '%-22s %14s %14s %9s %16s %16s %14s %14s\n' binary client-cpu-s/10k bare-cpu-s/10k ratio client-allocs/op bare-allocs/op client-B/op bare-B/op
for b in "${BINS[@]}"; do
  awk -v name="$(basename "$b")" '
    function metric(unit,   i) { for (i = 3; i < NF; i++) if ($(i+1) == unit) return $i; return "" }
    function median(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    /\/client-/ { nc++; cc[nc] = metric("cpu-s/10k"); ca[nc] = metric("client-allocs/call"); cb[nc] = metric("client-B/call") }
    /\/bare-net-http-/ { nb++; bc[nb] = metric("cpu-s/10k"); ba[nb] = metric("client-allocs/call"); bb[nb] = metric("client-B/call"); if (nb <= nc) r[nb] = cc[nb] / bc[nb] }
    END {
      printf "%-22s %14.3f %14.3f %9.2f %16.1f %16.1f %14.0f %14.0f\n", name, median(cc, nc), median(bc, nb), median(r, nb), median(ca, nc), median(ba, nb), median(cb, nc), median(bb, nb)
    }' "$OUT/cpu-$(basename "$b").txt"
done
