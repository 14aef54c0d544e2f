#!/usr/bin/env bash
# bench/device.sh: issue 27's client CPU and hang figures on a quiet machine
# without Go (a 16-core device), from static binaries built here.
#
#   bench/device.sh build DIR [BASE]   # here: static binaries of this checkout ("new")
#                                      # and of git ref BASE ("base", default main)
#                                      # into DIR: submitter tests, bulkload, hangbench, gen
#   bench/device.sh run DIR            # there: about 4 minutes, two tables
#
# On a device lent through this workplace's `run` tool: build into
# bench/out/device (ignored: name it in `carry`), then
#   run(command="bench/device.sh run bench/out/device", carry=["bench/out/device"], timeout_s=480)
#
# run prints bench/cpu.sh's table (client CPU per 10,000 createLead calls
# against bare net/http, medians of PAIRS=5 interleaved pairs, base and
# new alternating) and bench/hang.sh's (the hung service, both forms, with
# --timeout 5s --outage-wait 30s) for base and new, and the machine's load.
# Exit 1 when new misses a hang aim. DIR is written under bench/out when
# relative; logs, results and summaries land in DIR too.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-}; dir=${2:-}
if [[ -z "$cmd" || -z "$dir" ]]; then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
mkdir -p "$dir"
case "$cmd" in
build)
  export PATH="$PATH:/usr/local/go/bin" CGO_ENABLED=0 GOFLAGS="-ldflags=-s -ldflags=-w -trimpath"
  base=${3:-main}
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  git archive "$base" | tar -x -C "$src"
  echo "== build base ($(git rev-parse --short "$base")) and new ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ', with uncommitted changes')) into $dir" >&2
  (cd "$src" && go test -c -o "$OLDPWD/$dir/base.test" ./submitter && go build -o "$OLDPWD/$dir/bulkload-base" ./cmd/bulkload)
  go test -c -o "$dir/new.test" ./submitter
  go build -o "$dir/bulkload-new" ./cmd/bulkload
  go build -o "$dir/hangbench" ./bench/hangbench
  go build -o "$dir/gen" ./bench/gen
  "$dir/gen" -q -n 1000 -seed 2705 -invalid 0 -prefix HANG- -o "$dir/hang-leads-1000.csv"
  # Compressed, they travel within a device's 64 MiB.
  for f in base.test new.test bulkload-base bulkload-new hangbench gen; do gzip -f "$dir/$f"; done
  ls -la "$dir" >&2
  ;;
run)
  for f in "$dir"/*.gz; do [[ -e "$f" ]] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
  echo "== bench/device.sh on $(nproc 2>/dev/null || echo ?) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?), $(date -u +%FT%TZ)"
  OUT_DIR="$dir" PAIRS=${PAIRS:-5} bench/cpu.sh "$dir/base.test" "$dir/new.test"
  rc=0
  for b in base new; do
    echo "== hang: $b"
    "$dir/hangbench" -bulkload "$dir/bulkload-$b" -input "$dir/hang-leads-1000.csv" -out "$dir" -port "${PORT:-18911}" -modes "${MODES:-held,unread}" || { [[ $b == new ]] && rc=1; }
  done
  echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
  exit $rc
  ;;
*)
  echo "bench/device.sh: want build or run, not $cmd" >&2
  exit 2
  ;;
esac
