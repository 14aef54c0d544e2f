#!/usr/bin/env bash
# bench/upload.sh: `bulkload upload` against the simulator running as a
# separate process (so the client's CPU is measured apart from the
# server's), in three scenarios:
#   a) no latency, --concurrency 16 --rate 0, 10,000 leads: client CPU per 10,000 leads
#   b) createLead latency 200ms, --concurrency 32 --rate 0, 2,000 leads:
#      achieved rows/s against the ideal 32 / 0.2 s = 160/s
#   c) server --rate-limit 100, client --rate 100, 3,000 leads: achieved
#      GraphQL calls/s and the number of 429 answers
#
#   bench/upload.sh              # all three
#   SCENARIOS="a c" bench/upload.sh
#   PORT=18899 bench/upload.sh   # another loopback port (default 18787)
#   C_RATE=90 SCENARIOS=c bench/upload.sh   # scenario c with another client rate
#
# Needs only Go. Output in bench/out/ (gitignored). The simulator is always
# stopped on exit; every command is bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

OUT=bench/out
PORT=${PORT:-18787}
SCENARIOS=${SCENARIOS:-"a b c"}
TIMEOUT=${TIMEOUT:-5m} # per upload
C_RATE=${C_RATE:-100}  # scenario c: the client's --rate (the server's limit stays 100)
BASE="http://127.0.0.1:$PORT"
mkdir -p "$OUT"

echo "== build (bench/out)" >&2
go build -o "$OUT/bulkload" ./cmd/bulkload
for tool in gen measure simstats; do go build -o "$OUT/$tool" "./bench/$tool"; done

kv() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p" | head -n 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

SIM_PID=""
stop_sim() {
  if [[ -n "$SIM_PID" ]]; then
    kill "$SIM_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SIM_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SIM_PID" 2>/dev/null || true
    wait "$SIM_PID" 2>/dev/null || true
    SIM_PID=""
  fi
}
trap stop_sim EXIT
trap 'exit 130' INT TERM

# start_sim NAME [SIM FLAGS...]: a fresh simulator (fresh dedupe state) per scenario.
start_sim() {
  local name=$1; shift
  if port_open; then
    echo "port $PORT is already in use: stop what listens there or set PORT" >&2
    exit 1
  fi
  "$OUT/bulkload" sim --addr "127.0.0.1:$PORT" --log-level warn "$@" >"$OUT/sim-$name.log" 2>&1 &
  SIM_PID=$!
  for _ in $(seq 1 100); do # up to 10 s
    if port_open; then return 0; fi
    if ! kill -0 "$SIM_PID" 2>/dev/null; then
      echo "simulator exited at start; see $OUT/sim-$name.log" >&2; tail -n 20 "$OUT/sim-$name.log" >&2; exit 1
    fi
    sleep 0.1
  done
  echo "simulator did not listen on $BASE within 10 s; see $OUT/sim-$name.log" >&2
  exit 1
}

# upload NAME FILE CONCURRENCY RATE: bulkload upload under measure; its
# exit status goes to UPLOAD_RC (not a subshell, so errexit stays in force).
UPLOAD_RC=0
upload() {
  local name=$1 file=$2 conc=$3 rate=$4
  rm -f "$OUT/upload-$name.kv" "$OUT/upload-$name.results.csv"
  set +e
  BULKLOAD_CLIENT_SECRET=bulkload-sim-secret "$OUT/measure" -label "upload-$name" -o "$OUT/upload-$name.kv" -timeout "$TIMEOUT" -- \
    "$OUT/bulkload" upload --endpoint "$BASE/graphql" --auth-url "$BASE" --tenant-id sim-tenant \
    --client-id bulkload-sim-client --app-id sim-debt-core --concurrency "$conc" --rate "$rate" \
    --results "$OUT/upload-$name.results.csv" --summary-json "$OUT/upload-$name.summary.json" \
    "$file" 2>"$OUT/upload-$name.log"
  local rc=$?
  set -e
  if [[ $rc -ne 0 ]]; then
    echo "upload $name: exit status $rc (0 expected: every generated row is valid); see $OUT/upload-$name.log" >&2
    tail -n 15 "$OUT/upload-$name.log" >&2
  fi
  "$OUT/simstats" -url "$BASE" >"$OUT/simstats-$name.kv"
  UPLOAD_RC=$rc
}

# gen_file N SEED: a cached file of N valid leads; its path goes to f.
gen_file() {
  f="$OUT/upload-$1-s$2.csv"
  [[ -s "$f" ]] || "$OUT/gen" -q -n "$1" -seed "$2" -invalid 0 -prefix "UP$2-" -o "$f"
}

report=()
for s in $SCENARIOS; do
  case $s in
  a)
    n=10000; gen_file $n 101
    echo "== a) $n leads, no latency, concurrency 16, rate unlimited" >&2
    start_sim a
    upload a "$f" 16 0
    stop_sim
    k="$OUT/upload-a.kv"
    report+=("$(awk -v n=$n -v w="$(kv "$k" wall_s)" -v c="$(kv "$k" cpu_s)" -v rss="$(kv "$k" maxrss_mib)" -v rc="$UPLOAD_RC" \
      -v calls="$(kv "$OUT/simstats-a.kv" graphql_calls)" -v dup="$(kv "$OUT/simstats-a.kv" max_create_per_lead)" 'BEGIN {
      printf "a) no latency, c=16, rate 0, %d leads: wall %.2f s (%.0f rows/s), client CPU %.3f s = %.3f s per 10,000 leads, peak RSS %.1f MiB, %d GraphQL calls, max createLead per leadId %d, exit %d",
        n, w, n/w, c, c*10000/n, rss, calls, dup, rc }')")
    ;;
  b)
    n=2000; gen_file $n 102
    echo "== b) $n leads, createLead latency 200ms, concurrency 32, rate unlimited" >&2
    start_sim b --create-latency 200ms
    upload b "$f" 32 0
    stop_sim
    k="$OUT/upload-b.kv"
    report+=("$(awk -v n=$n -v w="$(kv "$k" wall_s)" -v c="$(kv "$k" cpu_s)" -v rc="$UPLOAD_RC" 'BEGIN {
      printf "b) createLead 200ms, c=32, rate 0, %d leads: wall %.2f s, %.1f rows/s = %.1f%% of the ideal 160/s, client CPU %.3f s, exit %d",
        n, w, n/w, 100*(n/w)/160, c, rc }')")
    ;;
  c)
    n=3000; gen_file $n 103
    echo "== c) $n leads, server --rate-limit 100, client --rate $C_RATE" >&2
    start_sim c --rate-limit 100
    upload c "$f" 16 "$C_RATE"
    stop_sim
    k="$OUT/upload-c.kv"; st="$OUT/simstats-c.kv"
    report+=("$(awk -v n=$n -v w="$(kv "$k" wall_s)" -v calls="$(kv "$st" graphql_calls)" -v r429="$(kv "$st" status_429)" -v cr="$C_RATE" -v rc="$UPLOAD_RC" 'BEGIN {
      printf "c) server limit 100/s, --rate %s, %d leads: wall %.2f s, %d GraphQL calls = %.1f calls/s (%.1f%% of 100), %d answered 429, %.1f rows/s, exit %d",
        cr, n, w, calls, calls/w, calls/w, r429, n/w, rc }')")
    ;;
  *) echo "unknown scenario $s (a, b or c)" >&2; exit 2 ;;
  esac
done

echo
echo "bulkload upload against bulkload sim on 127.0.0.1:$PORT ($(nproc 2>/dev/null || echo ?) CPUs shared by client and server, $(date -u +%FT%TZ))"
for line in "${report[@]}"; do echo "$line"; done
echo "Wall times include token fetch and process start. Details: $OUT/upload-*.kv|log|summary.json, $OUT/simstats-*.kv, $OUT/sim-*.log."
