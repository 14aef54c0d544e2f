#!/usr/bin/env bash
# bench/short.sh: a short file against a service whose slow calls are
# random (issue 27 item 1): `bulkload upload` with no tuning flag and with
# --concurrency 32, each from two builds (a base ref and this checkout),
# against `bulkload sim --create-latency-dist DIST` (no capacity limit),
# interleaved pair by pair, one table. What it shows: whether
# --concurrency auto keeps its limit (median in flight and limit over the
# run's timeline, latency cuts) and its wall time against a fixed 32 in
# the same pair, and whether the summary advises a pin.
#
#   bench/short.sh                                   # pareto:50ms,1.5, 400 rows, 5 pairs, base main
#   BASE=<ref> PAIRS=3 ROWS=400 DIST=lognormal:100ms,1 bench/short.sh
#   SEED=5 bench/short.sh                            # the simulator's seed (default 0, the house check's)
#   DIST= ROWS=60 SIMFLAGS="--capacity 2 --queue-limit 8 --create-latency 200ms --submit-latency 200ms" bench/short.sh
#                                                    # a start above a small capacity: auto must cut (the c32 runs only queue)
#
# Needs only Go and python3 (to read the summary JSON). Output in
# bench/out/short/ (gitignored): per run its summary JSON and stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

OUT=bench/out/short
BASE=${BASE:-main}
PAIRS=${PAIRS:-5}
ROWS=${ROWS:-400}
DIST=${DIST-pareto:50ms,1.5}
SEED=${SEED:-0}
SIMFLAGS=${SIMFLAGS:-} # more flags of bulkload sim, split on spaces
PORT=${PORT:-19300}
mkdir -p "$OUT"
go build -o "$OUT/bulkload" ./cmd/bulkload
go build -o "$OUT/gen" ./bench/gen
src=$(mktemp -d)
git archive "$BASE" | tar -x -C "$src"
(cd "$src" && go build -o "$OLDPWD/$OUT/bulkload-base" ./cmd/bulkload)
rm -rf "$src"
IN="$OUT/in-$ROWS.csv"
"$OUT/gen" -n "$ROWS" -invalid 0 >"$IN" 2>/dev/null

# one BIN NAME [upload flags...]: a fresh simulator on PORT, one upload,
# one line of the table.
one() {
  local bin=$1 name=$2
  shift 2
  local d="$OUT/$name"
  rm -rf "$d" && mkdir -p "$d"
  # shellcheck disable=SC2086 # SIMFLAGS is a list of flags
  timeout 120 "$OUT/bulkload" sim --addr "127.0.0.1:$PORT" --seed "$SEED" ${DIST:+--create-latency-dist "$DIST"} $SIMFLAGS >"$d/sim.log" 2>&1 &
  local sp=$!
  local secret=""
  for _ in $(seq 50); do
    secret=$(grep -o '/tmp/bulkload-sim-[0-9]*/client-secret' "$d/sim.log" | head -1 || true)
    [[ -n "$secret" ]] && break
    sleep 0.1
  done
  local t0 t1 code=0
  t0=$(date +%s.%N)
  BULKLOAD_LEDGER=off timeout 120 "$bin" upload --endpoint "http://127.0.0.1:$PORT/graphql" \
    --token-url "http://127.0.0.1:$PORT/sim-tenant/oauth2/v2.0/token" --client-id bulkload-sim-client \
    --scope api://sim-debt-core/.default --client-secret-file "$secret" --results "$d/r.csv" \
    --progress off --summary-json "$d/s.json" "$@" "$IN" >"$d/out.txt" 2>&1 || code=$?
  t1=$(date +%s.%N)
  kill "$sp" 2>/dev/null || true
  wait "$sp" 2>/dev/null || true
  python3 - "$d/s.json" "$name" "$code" "$t0" "$t1" <<'PY'
import json, statistics, sys
p, name, code, t0, t1 = sys.argv[1:]
s = json.load(open(p))
c = s.get("concurrency") or {}
tl = [x for x in s["timeline"]["samples"] if x["answered"] > 0]
inf = statistics.median(x["inFlight"] for x in tl) if tl else 0
lim = statistics.median(x["concurrencyLimit"] for x in tl) if tl else 0
low = min((x["concurrencyLimit"] for x in tl), default=0)
b = s.get("boundBy") or {}
pin = "pin" if "pin it" in b.get("text", "") else "-"
print(f"{name:<14} exit {code:>2} {float(t1)-float(t0):6.1f}s  in flight {inf:5.1f}  limit median {lim:5.1f} lowest {low:3d}  cuts {c.get('latencyCuts', 0):2d}  bound by {b.get('kind', '?'):<12} {pin}")
PY
}

echo "== bench/short.sh: $ROWS rows, ${DIST:-no latency distribution} $SIMFLAGS (seed $SEED), $PAIRS pairs, base $BASE ($(git rev-parse --short "$BASE")) against $(git rev-parse --short HEAD)$(git diff --quiet || echo +changes), on $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
for i in $(seq "$PAIRS"); do
  one "$OUT/bulkload-base" "base-auto-$i"
  one "$OUT/bulkload" "new-auto-$i"
  one "$OUT/bulkload-base" "base-c32-$i" --concurrency 32
  one "$OUT/bulkload" "new-c32-$i" --concurrency 32
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
