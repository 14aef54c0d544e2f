#!/usr/bin/env bash
# bench/shapes.sh: every aim of issue 27 in one run of under 6 minutes on a
# 16-core machine, main-vs-change or auto-vs-fixed, with static binaries
# (CGO_ENABLED=0) and bench/concbench and bench/ratebench as drivers:
#
#   1. conc.sh's and rate.sh's scenarios (cap64, cap256, rate150, halve,
#      mem512; r50s, r300s, r50b, r300b, nolimit, halve), the base build and
#      this one side by side (each on its own loopback port): still at their
#      aims (>= 90% of K/L, >= 95% of R, <= 1% 429, queue wait <= 20% of L);
#   2. the shapes that do not depend on the load (bimodal, bimodal behind a
#      capacity, lognormal, pareto, 10% and 20% 503s, 503s with Retry-After:
#      2), each with no tuning flag against --concurrency 8/16/32/64/128 in
#      the same wave: >= 90% of the best fixed, 0 failed rows;
#   3. cap8 (L 20 ms, K 8) base and change, and over the whole run against
#      --concurrency 8 (>= 95% of it, queue wait <= 20% of L); r2000s and
#      r2000b base and change;
#   4. 10,000 rows, no latency, no limit: defaults against --concurrency 8
#      --rate 0 (wall and CPU <= 1.2x), twice, and the base's defaults.
#
#   bench/shapes.sh                  # build both binaries, then run (about 5 min)
#   bench/shapes.sh build            # only build bench/out/shapes/bin/ (to carry elsewhere: 52 MiB)
#   PREBUILT=1 bench/shapes.sh       # run the binaries in bench/out/shapes/bin/ (no Go needed)
#   BASE=<commit> bench/shapes.sh    # the base build (default: the commit before issue 27's pacing)
#   PORT=19000 WAVES=1,2 bench/shapes.sh
#   DURATION=5s WAVES=2 PREBUILT=1 bench/shapes.sh   # a smoke test: every timed scenario 5 s
#
# Output: one table per wave on stdout; logs, samples, results and summaries
# under bench/out/shapes/run/{base,new}/ (emptied at the start), the inputs
# under bench/out/shapes/in/ (generated once). Every process is bounded in
# time.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

BIN=bench/out/shapes/bin
IN=bench/out/shapes/in
RUN=bench/out/shapes/run
BASE=${BASE:-8019cca~1}
PORT=${PORT:-19000}
WAVES=${WAVES:-1,2,3,4}
mkdir -p "$BIN" "$IN"

build() {
  echo "== build $BIN (static): this tree, and the base $BASE" >&2
  export CGO_ENABLED=0
  local flags=(-trimpath -ldflags="-s -w") # small enough to carry to another machine
  go build "${flags[@]}" -o "$BIN/bulkload" ./cmd/bulkload
  go build "${flags[@]}" -o "$BIN/concbench" ./bench/concbench
  go build "${flags[@]}" -o "$BIN/ratebench" ./bench/ratebench
  go build "${flags[@]}" -o "$BIN/gen" ./bench/gen
  local src
  src=$(mktemp -d)
  git archive "$BASE" | tar -x -C "$src"
  (cd "$src" && go build "${flags[@]}" -o "$OLDPWD/$BIN/bulkload-base" ./cmd/bulkload)
  rm -rf "$src"
}

if [[ "${1:-}" == build ]]; then
  build
  exit 0
fi
if [[ -z "${PREBUILT:-}" ]]; then
  build
fi
for b in bulkload bulkload-base concbench ratebench gen; do
  [[ -x "$BIN/$b" ]] || { echo "missing $BIN/$b: run bench/shapes.sh build" >&2; exit 2; }
done
rm -rf "$RUN"
mkdir -p "$RUN/base" "$RUN/new"

CONC_IN="$IN/conc-leads-40000.csv"
FAST_IN="$IN/conc-fast-10000.csv"
RATE_IN="$IN/rate-leads-150000.csv"
[[ -s "$CONC_IN" ]] || "$BIN/gen" -q -n 40000 -seed 1601 -invalid 0 -prefix CONC- -o "$CONC_IN"
[[ -s "$FAST_IN" ]] || "$BIN/gen" -q -n 10000 -seed 1602 -invalid 0 -prefix FAST- -o "$FAST_IN"
[[ -s "$RATE_IN" ]] || "$BIN/gen" -q -n 150000 -seed 301 -invalid 0 -prefix RATE- -o "$RATE_IN"

load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?; }
echo "== bench/shapes.sh on $(nproc 2>/dev/null || echo ?) CPUs, load $(load), $(date -u +%FT%TZ), base $BASE" >&2

# conc NAME BIN OUT PORT SCENARIOS [INPUT]: a concbench with its scenarios
# side by side, its table to OUT/NAME.table (INPUT: the leads to upload,
# default CONC_IN).
conc() {
  "$BIN/concbench" -bulkload "$2" -input "${6:-$CONC_IN}" -fast-input "$FAST_IN" -out "$3" -port "$4" -parallel -scenarios "$5" \
    ${DURATION:+-duration "$DURATION"} >"$3/$1.table" 2>"$3/$1.log"
}
# failed WHAT LOG: a driver failed: say so in the output, with its log's
# tail (the logs stay on the machine that ran them).
failed() {
  echo "($1 failed: the last lines of $2 follow)" | tee /dev/stderr
  tail -n 25 "$2" 2>/dev/null | sed 's/^/    /' || true
}
# rate NAME BIN OUT PORT SCENARIO: one ratebench scenario.
rate() {
  "$BIN/ratebench" -bulkload "$2" -input "$RATE_IN" -out "$3" -port "$4" -scenarios "$5" \
    ${DURATION:+-duration "$DURATION"} >"$3/$1.table" 2>"$3/$1.log"
}
show() {
  local f
  for f in "$@"; do
    echo "-- $f"
    cat "$f"
  done
}

has() { [[ ",$WAVES," == *",$1,"* ]]; }

if has 1; then
  echo "== wave 1: conc.sh and rate.sh scenarios, base and change side by side (about 55 s; load $(load))" >&2
  pids=()
  for side in base new; do
    bin="$BIN/bulkload"; [[ $side == base ]] && bin="$BIN/bulkload-base"
    off=0; [[ $side == base ]] && off=100
    conc w1conc "$bin" "$RUN/$side" $((PORT + off)) cap64,cap256,rate150,halve,mem512 & pids+=($!)
    i=10
    for sc in r50s r300s r50b r300b nolimit halve; do
      rate "w1rate-$sc" "$bin" "$RUN/$side" $((PORT + off + i)) "$sc" & pids+=($!)
      i=$((i + 1))
    done
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || wave1failed=1
  done
  if [[ -n "${wave1failed:-}" ]]; then
    for f in "$RUN"/base/w1*.log "$RUN"/new/w1*.log; do
      if grep -q '^concbench: \|^ratebench: ' "$f" 2>/dev/null; then failed "a driver of wave 1" "$f"; fi
    done
  fi
  for side in base new; do
    echo "== wave 1, $side"
    show "$RUN/$side/w1conc.table" "$RUN/$side"/w1rate-*.table
  done
fi

if has 2; then
  echo "== wave 2: the shapes, auto against fixed limits side by side (about 70 s; load $(load))" >&2
  # The 150,000 leads of rate.sh: on 16 cores fail10 with no tuning flag
  # sends 40,000 leads (CONC_IN) in under 30 s, and its upload ended
  # before the scenario did, which failed the whole wave.
  conc w2a "$BIN/bulkload" "$RUN/new" $((PORT + 200)) \
    bimodal,bimodal-c8,bimodal-c32,bimodal-c128,bimodalk32,bimodalk32-c16,bimodalk32-c32,bimodalk32-c64,lognormal,lognormal-c32,lognormal-c64,lognormal-c128,fail10,fail10-c8,fail10-c32,fail10-c128 "$RATE_IN" \
    || failed "wave 2a" "$RUN/new/w2a.log"
  conc w2b "$BIN/bulkload" "$RUN/new" $((PORT + 250)) \
    pareto,pareto-c8,pareto-c32,pareto-c128,fail20,fail20-c8,fail20-c32,fail20-c128,ra2,ra2-c8,ra2-c32,ra2-c128 "$RATE_IN" \
    || failed "wave 2b" "$RUN/new/w2b.log"
  echo "== wave 2, the shapes (change)"
  show "$RUN/new/w2a.table" "$RUN/new/w2b.table"
fi

if has 3; then
  echo "== wave 3: cap8 base and change, cap8 over the whole run against --concurrency 8, r2000s and r2000b (about 55 s; load $(load))" >&2
  pids=()
  conc w3cap8 "$BIN/bulkload" "$RUN/new" $((PORT + 300)) cap8 & pids+=($!)
  conc w3cap8 "$BIN/bulkload-base" "$RUN/base" $((PORT + 310)) cap8 & pids+=($!)
  for side in base new; do
    bin="$BIN/bulkload"; [[ $side == base ]] && bin="$BIN/bulkload-base"
    off=0; [[ $side == base ]] && off=10
    rate w3rate-r2000s "$bin" "$RUN/$side" $((PORT + 320 + off)) r2000s & pids+=($!)
    rate w3rate-r2000b "$bin" "$RUN/$side" $((PORT + 321 + off)) r2000b & pids+=($!)
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || wave3failed=1
  done
  if [[ -n "${wave3failed:-}" ]]; then
    for f in "$RUN"/base/w3*.log "$RUN"/new/w3*.log; do
      if grep -q '^concbench: \|^ratebench: ' "$f" 2>/dev/null; then failed "a driver of wave 3" "$f"; fi
    done
  fi
  conc w3whole "$BIN/bulkload" "$RUN/new" $((PORT + 340)) cap8whole,cap8whole-c8 || failed "cap8whole" "$RUN/new/w3whole.log"
  for side in base new; do
    echo "== wave 3, $side"
    show "$RUN/$side/w3cap8.table" "$RUN/$side"/w3rate-*.table
  done
  echo "== wave 3, cap8 over the whole run (change)"
  show "$RUN/new/w3whole.table"
fi

if has 4; then
  echo "== wave 4: 10,000 rows, no latency, no limit, one after the other (about 30 s; load $(load))" >&2
  for round in 1 2; do
    conc "w4new-$round" "$BIN/bulkload" "$RUN/new" $((PORT + 400)) fast || failed "fast" "$RUN/new/w4new-$round.log"
    conc "w4new8-$round" "$BIN/bulkload" "$RUN/new" $((PORT + 400)) fast8r0 || failed "fast8r0" "$RUN/new/w4new8-$round.log"
    conc "w4base-$round" "$BIN/bulkload-base" "$RUN/base" $((PORT + 400)) fast || failed "the base's fast" "$RUN/base/w4base-$round.log"
  done
  echo "== wave 4: fast (defaults), fast8r0 (--concurrency 8 --rate 0), base's fast"
  show "$RUN"/new/w4new-*.table "$RUN"/new/w4new8-*.table "$RUN"/base/w4base-*.table
fi
echo "== load after: $(load)" >&2
