#!/usr/bin/env bash
# deploy/measure.sh: the run behind the resource requests in deploy/k8s/.
# It uploads a generated partner file of N leads (default 20,000, 2% invalid)
# with the CronJob's flags to `bulkload sim` running as a separate process
# (so only the client is measured) and prints the client's peak RSS and CPU
# from GNU time (/usr/bin/time -v) and bench/measure.
#
#   deploy/measure.sh                 # N=20000, --concurrency 8 --rate 0
#   N=100000 RATE=20 deploy/measure.sh
#
# --rate 0 (unlimited) is the worst case for CPU: the client runs as fast as
# the simulator answers. Output in deploy/out/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
N=${N:-20000}
RATE=${RATE:-0}
CONC=${CONC:-8}
PORT=${PORT:-18797}
OUT=deploy/out
BASE="http://127.0.0.1:$PORT"
mkdir -p "$OUT"
go build -o "$OUT/bulkload" ./cmd/bulkload
go build -o "$OUT/gen" ./bench/gen
go build -o "$OUT/measure" ./bench/measure
f="$OUT/leads-$N.csv"
[[ -s "$f" ]] || "$OUT/gen" -q -n "$N" -seed 7 -invalid 0.02 -prefix "M7-" -o "$f"

"$OUT/bulkload" sim --addr "127.0.0.1:$PORT" --log-level warn >"$OUT/sim.log" 2>&1 &
SIM=$!
trap 'kill $SIM 2>/dev/null || true; wait $SIM 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

rm -f "$OUT/measure.results.csv" "$OUT/measure.kv"
set +e
BULKLOAD_CLIENT_SECRET=bulkload-sim-secret /usr/bin/time -v -o "$OUT/time.txt" \
  "$OUT/measure" -label upload -o "$OUT/measure.kv" -timeout 10m -- \
  "$OUT/bulkload" upload --endpoint "$BASE/graphql" --auth-url "$BASE" --tenant-id sim-tenant \
  --client-id bulkload-sim-client --app-id sim-debt-core --concurrency "$CONC" --rate "$RATE" \
  --progress off --results "$OUT/measure.results.csv" --summary-json "$OUT/measure.summary.json" \
  "$f" 2>"$OUT/upload.log"
rc=$?
set -e
echo "upload of $N rows (--concurrency $CONC --rate $RATE): exit $rc (1 expected: 2% invalid rows)"
cat "$OUT/measure.kv"
grep -E 'Maximum resident|Elapsed|User time|System time|Percent of CPU' "$OUT/time.txt"
