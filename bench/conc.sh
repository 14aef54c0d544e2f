#!/usr/bin/env bash
# bench/conc.sh: how `bulkload upload` finds the concurrency a slow service
# takes by itself (--concurrency auto, the default), against `bulkload sim`
# in a separate process, with no tuning flag on the upload (bench/concbench
# drives both and prints one table). Scenarios (issue 16's aims):
#   cap64    L 1 s ±0.2, K 64 (queue 64), no rate limit, 40 s: ≥ 90% of K/L,
#            queue wait ≤ 20% of L, ≤ 1% shed, 90% within 15 s
#   cap256   L 2 s, K 256 (queue 256), 50 s: ≥ 90% of K/L (the default
#            --max-concurrency is 256 = K)
#   cap8     L 20 ms, K 8 (queue 8), 30 s: ≥ 90% of K/L, queue wait ≤ 20% of L
#   rate150  L 300 ms ±100, --rate-limit 150, no capacity, 40 s: ≥ 95% of R,
#            ≤ 1% 429
#   halve    L 1 s ±0.2, K 64 → 32 at 25 s (queue 32), 45 s: back to ≤ 10%
#            queue wait within 5 s, ≤ 2% shed
#   halve64  halve with a queue of 64 (not run by default): the deeper queue
#            behind which a latency cut used to be undone (pace's model)
#   mem512   L 1 s, no capacity, --max-concurrency 512, 30 s: peak RSS ≤ 64 MiB
#            at 512 calls in flight
#   cap8c8, cap8c9, cap8c10  cap8 with --concurrency 8, 9, 10 (not run by
#            default): what a steady limit gets from that service on this
#            machine, the reference for cap8's figures
#   fast     no latency, no limit, 10,000 leads to the end, defaults
#   fast8    the same with --concurrency 8 (the old default): fast must be no
#            worse in rows/s and client CPU
#
#   bench/conc.sh                           # builds bench/out/bulkload, all scenarios (~6 min)
#   bench/conc.sh /path/to/bulkload         # measure that binary instead
#   SCENARIOS=cap64,halve bench/conc.sh     # some of them
#   PORT=18899 bench/conc.sh
#
# Needs only Go. Output in bench/out/ (gitignored): conc-*.{sim,upload}.log,
# samples, results and summaries. Every process is bounded in time and
# stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_setup concbench "${1:-}"

# 40,000 valid leads (about 60,000 calls): more than any timed scenario
# sends (cap8 and mem512 send about 12,000-15,000).
IN="$OUT/conc-leads-40000.csv"
bench_input "$IN" 40000 1601 CONC-
FAST="$OUT/conc-fast-10000.csv"
bench_input "$FAST" 10000 1602 FAST-

echo "== bench/conc.sh on $(bench_cpus) CPUs shared by client and simulator, load $(bench_load), $(date -u +%FT%TZ)" >&2
"$OUT/concbench" -bulkload "$BIN" -input "$IN" -fast-input "$FAST" -out "$OUT" -port "${PORT:-18897}" \
  ${SCENARIOS:+-scenarios "$SCENARIOS"}
echo "== load after: $(bench_load)" >&2
