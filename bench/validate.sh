#!/usr/bin/env bash
# bench/validate.sh: wall time, CPU time and peak memory of `bulkload
# validate` on generated files of 1M and 5M rows, against the parse-only
# floor (encoding/csv over the same file), measured in the same run.
#
#   bench/validate.sh                   # sizes 1000000 and 5000000
#   SIZES="100000" bench/validate.sh    # other sizes
#   FRESH=1 bench/validate.sh           # regenerate the cached input files
#
# On another machine, without Go (static binaries, no cgo):
#
#   bench/validate.sh build             # here: CGO_ENABLED=0 binaries into bench/out/
#   GOOS=linux GOARCH=arm64 bench/validate.sh build   # for another platform
#   scp -r bench/validate.sh bench/out/{bulkload,gen,floor,measure} host:bench/   # keep this layout:
#   ssh host 'mkdir -p bench/out && mv bench/{bulkload,gen,floor,measure} bench/out/ && bench/validate.sh'
#
# Without a `go` on PATH (or with PREBUILT=1) it runs the binaries already in
# bench/out/. Everything goes to bench/out/ (gitignored): the generated files
# (cached: leads-N.csv, about 250 bytes a row, 1.25 GB for 5M), results
# files, logs and the key=value reports of bench/out/measure. 1M + 5M take
# about 3 minutes on 16 cores, generation included (the files are cached).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

OUT=bench/out
SIZES=${SIZES:-"1000000 5000000"}
TIMEOUT=${TIMEOUT:-10m} # per measured command
SEED=${SEED:-1}
mkdir -p "$OUT"

build() {
  echo "== build static binaries into $OUT (CGO_ENABLED=0 $(go env GOOS)/$(go env GOARCH))" >&2
  CGO_ENABLED=0 go build -trimpath -o "$OUT/bulkload" ./cmd/bulkload
  for tool in gen floor measure; do CGO_ENABLED=0 go build -trimpath -o "$OUT/$tool" "./bench/$tool"; done
}

if [[ "${1:-}" == build ]]; then
  build
  exit 0
fi
if [[ -z "${PREBUILT:-}" ]] && command -v go >/dev/null; then
  build
else
  for b in bulkload gen floor measure; do
    [[ -x "$OUT/$b" ]] || { echo "no go on PATH and no $OUT/$b: run bench/validate.sh build where Go is" >&2; exit 2; }
  done
  echo "== using the binaries in $OUT" >&2
fi

# kv FILE KEY: the value of KEY in a key=value line.
kv() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -n 1; }
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime | sed 's/.*averages*: //'; }

cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo "?")
load_before=$(load)
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
    "$OUT/bulkload" validate --overwrite --results "$OUT/$n.results.csv" "$f" 2>"$OUT/validate-$n.log"
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
  fcpu=$(kv "$OUT/floor-$n.kv" cpu_s)
  frss=$(kv "$OUT/floor-$n.kv" maxrss_mib)
  vs=$(kv "$OUT/validate-$n.kv" wall_s)
  vcpu=$(kv "$OUT/validate-$n.kv" cpu_s)
  vrss=$(kv "$OUT/validate-$n.kv" maxrss_mib)
  rows_table+=("$(awk -v r="$rows" -v fs="$fs" -v fcpu="$fcpu" -v frss="$frss" -v vs="$vs" -v vrss="$vrss" -v vcpu="$vcpu" -v rc="$rc" 'BEGIN {
    printf "%9d | %6.2f %6.2f %5.1f | %6.2f %6.2f %5.1f %9.0f | %5.2f %5.2f | %4d\n",
      r, fs, fcpu, frss, vs, vcpu, vrss, r/vs, vs/fs, vcpu/fcpu, rc }')")
done

echo
echo "bulkload validate vs the encoding/csv floor: $cores CPUs, $(uname -sm), $(date -u +%FT%TZ), load average $load_before before, $(load) after"
printf "%9s | %-18s | %-33s | %-11s | %4s\n" "" "floor" "bulkload validate (+ results)" "validate/floor" ""
printf "%9s | %6s %6s %5s | %6s %6s %5s %9s | %5s %5s | %4s\n" \
  rows "wall s" "cpu s" "MiB" "wall s" "cpu s" "MiB" "rows/s" wall cpu exit
for line in "${rows_table[@]}"; do echo "$line"; done
echo
echo "cpu s = user+sys; MiB = peak RSS (rusage maxrss); rows/s = rows / validate wall s. Aims (issue 11.2): on >= 8 CPUs"
echo "wall <= 2x the floor at 1M rows; on 2 CPUs cpu <= 5x the floor; peak RSS <= 64 MiB up to 5M rows. Exit 1 = some"
echo "rows invalid (expected: ~2% of generated rows carry one error). Details: $OUT/*.kv, $OUT/validate-N.log."
