#!/usr/bin/env bash
# bench/rate.sh: how well `bulkload upload --rate auto` finds a rate limit it
# is not told, against `bulkload sim` in a separate process (bench/ratebench
# drives both and prints one table). Scenarios, 40 s each unless DURATION:
#   rNs / rNb   limit N in {50, 300, 2000} calls/s, smooth (bucket N/10) or
#               bursty (bucket N): steady state as % of N, 429 share over the
#               whole run, time to 90% of N
#   nolimit     no limit, 200 ms on every call, concurrency 32: % of C/L = 160/s
#   halve       limit 300 halving to 150 at 3/4 of DURATION: time back under
#               it, 429 share
#
#   bench/rate.sh                          # builds bench/out/bulkload, all scenarios (~6 min)
#   bench/rate.sh /path/to/bulkload        # measure that binary instead
#   SCENARIOS=r300s,halve bench/rate.sh    # some of them
#   DURATION=60s PORT=18899 bench/rate.sh
#
# Needs only Go. Output in bench/out/ (gitignored): rate-*.{sim,upload}.log,
# results and summaries. Every process is bounded in time and stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_setup ratebench "${1:-}"

# 150,000 valid leads (about 225,000 calls): more than 2000 calls/s for
# the longest scenario uses.
IN="$OUT/rate-leads-150000.csv"
bench_input "$IN" 150000 301 RATE-

echo "== bench/rate.sh on $(bench_cpus) CPUs shared by client and simulator, $(date -u +%FT%TZ)" >&2
"$OUT/ratebench" -bulkload "$BIN" -input "$IN" -out "$OUT" -port "${PORT:-18797}" \
  -duration "${DURATION:-40s}" ${SCENARIOS:+-scenarios "$SCENARIOS"}
