#!/usr/bin/env bash
# bench/hang.sh: how `bulkload upload` meets a hung service (issue 27,
# finding 5), against `bulkload sim --hang-after 150` in a separate process,
# in both forms of the hang (--hang-mode held: processed, answers held;
# unread: held unread, nothing processed), with --timeout 5s --outage-wait
# 30s and no other tuning flag (bench/hangbench drives both and prints one
# table). Aims: exit 4 within 50 s of the hang (3 x --timeout +
# --outage-wait + 5 s), 0 rows failed or submit_failed, and a --resume
# after the heal that ends every row with every lead created once and
# every qualified lead submitted once. Exit status 1 when an aim is missed.
#
#   bench/hang.sh                       # builds bench/out/bulkload, both forms (~2 min)
#   bench/hang.sh /path/to/bulkload     # measure that binary instead (a static build on a device)
#   MODES=unread PORT=18899 bench/hang.sh
#
# Needs only Go (or, given a binary, a Go toolchain for hangbench and gen).
# Output in bench/out/ (gitignored): hang-*.{sim,upload,resume}.log,
# results and summaries.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_setup hangbench "${1:-}"

# 1,000 valid leads: the hang after 150 requests comes in the first
# seconds, with most rows still to send.
IN="$OUT/hang-leads-1000.csv"
bench_input "$IN" 1000 2705 HANG-

echo "== bench/hang.sh on $(bench_cpus) CPUs shared by client and simulator, load $(bench_load), $(date -u +%FT%TZ)" >&2
"$OUT/hangbench" -bulkload "$BIN" -input "$IN" -out "$OUT" -port "${PORT:-18911}" -modes "${MODES:-held,unread}"
