#!/usr/bin/env bash
# bench/validate.sh: throughput and peak memory of `bulkload validate` on
# generated files of 100k and 1M rows, against the parse-only floor
# (encoding/csv over the same file), measured in the same run.
#
#   bench/validate.sh                 # sizes 100000 and 1000000
#   SIZES="10000" bench/validate.sh   # other sizes
#   FRESH=1 bench/validate.sh         # regenerate the cached input files
#
# Needs only Go. Everything goes to bench/out/ (gitignored): binaries, the
# generated files (cached: leads-N.csv), results files, logs, and the
# key=value reports of bench/out/measure.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

OUT=bench/out
SIZES=${SIZES:-"100000 1000000"}
TIMEOUT=${TIMEOUT:-10m} # per measured command
SEED=${SEED:-1}
mkdir -p "$OUT"

echo "== build (bench/out)" >&2
go build -o "$OUT/bulkload" ./cmd/bulkload
for tool in gen floor measure; do go build -o "$OUT/$tool" "./bench/$tool"; done

# kv FILE KEY: the value of KEY in a key=value line.
kv() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -n 1; }

rows_table=()
for n in $SIZES; do
  f="$OUT/leads-$n.csv"
  if [[ -n "${FRESH:-}" || ! -s "$f" ]]; then
    echo "== generate $f" >&2
    "$OUT/gen" -n "$n" -seed "$SEED" -invalid 0.02 -o "$f.tmp"
    mv "$f.tmp" "$f"
  fi

  echo "== floor $n" >&2
  rm -f "$OUT/floor-$n.kv"
  "$OUT/measure" -label "floor-$n" -o "$OUT/floor-$n.kv" -timeout "$TIMEOUT" -- \
    "$OUT/floor" "$f" >"$OUT/floor-$n.out"

  echo "== validate $n" >&2
  rm -f "$OUT/validate-$n.kv"
  set +e
  "$OUT/measure" -label "validate-$n" -o "$OUT/validate-$n.kv" -timeout "$TIMEOUT" -- \
    "$OUT/bulkload" validate --results "$OUT/$n.results.csv" "$f" 2>"$OUT/validate-$n.log"
  rc=$?
  set -e
  # 1 means "some rows are invalid": expected, the file has ~2% flawed rows.
  if [[ $rc -ne 0 && $rc -ne 1 ]]; then
    echo "validate $n failed with exit status $rc; see $OUT/validate-$n.log" >&2
    tail -n 20 "$OUT/validate-$n.log" >&2
    exit 1
  fi

  rows=$(kv "$OUT/floor-$n.out" rows)
  fs=$(kv "$OUT/floor-$n.kv" wall_s)
  frss=$(kv "$OUT/floor-$n.kv" maxrss_mib)
  vs=$(kv "$OUT/validate-$n.kv" wall_s)
  vrss=$(kv "$OUT/validate-$n.kv" maxrss_mib)
  vcpu=$(kv "$OUT/validate-$n.kv" cpu_s)
  fcpu=$(kv "$OUT/floor-$n.kv" cpu_s)
  rows_table+=("$(awk -v r="$rows" -v fs="$fs" -v fcpu="$fcpu" -v frss="$frss" -v vs="$vs" -v vrss="$vrss" -v vcpu="$vcpu" -v rc="$rc" 'BEGIN {
    printf "%9d | %7.3f %7.3f %10.0f %8.1f | %7.3f %7.3f %10.0f %8.1f | %6.2f %6.2f | %4d\n",
      r, fs, fcpu, r/fs, frss, vs, vcpu, r/vs, vrss, vs/fs, vcpu/fcpu, rc }')")
done

echo
echo "bulkload validate vs the encoding/csv floor ($(nproc 2>/dev/null || echo ?) CPUs, $(go env GOOS)/$(go env GOARCH), $(date -u +%FT%TZ))"
printf "%9s | %-36s | %-36s | %-13s | %4s\n" "" "floor (encoding/csv, parse only)" "bulkload validate (+ results file)" "validate/floor" ""
printf "%9s | %7s %7s %10s %8s | %7s %7s %10s %8s | %6s %6s | %4s\n" \
  rows "wall s" "cpu s" "rows/s" "peak MiB" "wall s" "cpu s" "rows/s" "peak MiB" wall cpu exit
for line in "${rows_table[@]}"; do echo "$line"; done
echo
echo "rows/s = rows / wall s; peak MiB = peak RSS of the process (rusage maxrss); validate/floor = ratio of wall and of CPU times;"
echo "exit 1 = some rows invalid (expected: ~2% of generated rows carry one error). Details: $OUT/*.kv, $OUT/validate-N.log."
