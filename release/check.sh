#!/usr/bin/env bash
# release/check.sh: the release pipeline from a fresh clone, as CI runs it
# (.ci/run). It proves that
#   1. `goreleaser release --snapshot --clean` builds, from a fresh clone of
#      HEAD, static archives for linux and darwin on amd64 and arm64, their
#      SHA-256 checksums and a CycloneDX SBOM per binary;
#   2. the linux/amd64 binary in its archive reports the pseudo-version Go
#      stamped from git (v0.0.0-<commit time>-<12 hex>, no "+dirty"), and
#      every binary is static (CGO_ENABLED=0) for its platform;
#   3. the image built from the archive's binary (release/image.sh) runs:
#      `podman run --rm IMAGE` (the default command: the sample to the
#      simulator) exits 0 as deploy/README.md says, and with a read-only
#      root as user 65532 an upload writes its results to a volume;
#      the image's binary is the archive's, byte for byte;
#   4. on a tagged commit, `bulkload version` says the tag (a v0 or v1 tag:
#      Go takes v2 and later only for a module path ending in /v2).
# Tools it installs when missing: goreleaser v2.15.1 and cyclonedx-gomod
# v1.10.0 (go install, into $(go env GOPATH)/bin: about 5 min and 40 s to
# compile on 2 cores, once), podman, buildah and runc (Debian).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
export PATH="$PATH:$(go env GOPATH)/bin"
log() { echo "release/check.sh: $*"; }
fail() { echo "release/check.sh: FAIL: $*" >&2; exit 1; }

need_go_tool() { # name module@version
  command -v "$1" >/dev/null && return
  log "installing $2 (go install)"
  local t0=$SECONDS
  GOFLAGS= go install "$2"
  log "installed $1 in $((SECONDS - t0)) s"
}
need_go_tool goreleaser github.com/goreleaser/goreleaser/v2@v2.15.1
need_go_tool cyclonedx-gomod github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0

work=$(mktemp -d)
image= vol=
cleanup() {
  [ -z "$vol" ] || podman volume rm -f "$vol" >/dev/null 2>&1 || true
  [ -z "$image" ] || podman rmi -f "$image" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
git clone -q "$root" "$work/src"
cd "$work/src"
head=$(git rev-parse HEAD)

# 1. The snapshot.
t0=$SECONDS
goreleaser release --snapshot --clean >"$work/goreleaser.log" 2>&1 || { cat "$work/goreleaser.log"; fail "goreleaser release --snapshot"; }
log "goreleaser release --snapshot --clean: $((SECONDS - t0)) s"
cd dist
for p in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
  [ -f bulkload_*_"$p".tar.gz ] || fail "no archive for $p: $(ls)"
  [ -f bulkload_*_"$p".cdx.json ] || fail "no SBOM for $p"
  grep -q '"bomFormat": "CycloneDX"' bulkload_*_"$p".cdx.json || fail "$p SBOM is not CycloneDX"
  grep -q 'pkg:golang/github.com/prometheus/client_golang@' bulkload_*_"$p".cdx.json || fail "$p SBOM lacks the modules linked in"
  mkdir -p "$work/x/$p" && tar -C "$work/x/$p" -xzf bulkload_*_"$p".tar.gz
  goos=${p%_*} goarch=${p#*_}
  info=$(go version -m "$work/x/$p/bulkload")
  for want in "GOOS=$goos" "GOARCH=$goarch" "CGO_ENABLED=0" "vcs.revision=$head" "-trimpath=true"; do
    grep -q -- "$want" <<<"$info" || fail "$p binary: go version -m lacks $want"
  done
done
sha256sum --quiet -c bulkload_*_checksums.txt || fail "checksums do not match"
[ "$(wc -l <bulkload_*_checksums.txt)" -eq 8 ] || fail "want 8 checksums (4 archives, 4 SBOMs)"
log "archives, checksums and SBOMs for linux and darwin x amd64 and arm64: OK"

# 2. The version the archived binary reports.
commit_time=$(TZ=UTC git log -1 --date=format-local:%Y%m%d%H%M%S --format=%cd)
got=$("$work/x/linux_amd64/bulkload" version)
log "archived binary: $got"
case "$got" in
  "bulkload v"*"$commit_time-${head:0:12}, revision $head, committed "*) ;;
  *) fail "bulkload version = '$got', want the pseudo-version ...-$commit_time-${head:0:12} and revision $head, unmodified" ;;
esac

# 3. The image.
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
  log "installing podman, buildah, runc (Debian)"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends podman buildah runc >/dev/null
fi
image=$("$root/release/image.sh" "$work/src/dist" 2>"$work/image.log" | tail -n 1) || { cat "$work/image.log"; fail "release/image.sh"; }
log "built $image"
# This project's machines (a Firecracker VM, cgroups v1 + v2 hybrid, lower
# rlimits than podman's defaults) need runc and explicit ulimits; crun
# refuses the hybrid cgroups. Elsewhere the plain command works.
run=(podman run --rm)
if ! "${run[@]}" "$image" version >/dev/null 2>"$work/podman.err"; then
  log "plain podman run failed ($(tail -n 1 "$work/podman.err")); using runc and explicit ulimits"
  run=(podman --runtime runc run --rm --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
fi
ctr=$(podman create "$image")
podman cp "$ctr:/usr/local/bin/bulkload" "$work/image-bulkload" && podman rm "$ctr" >/dev/null
cmp -s "$work/image-bulkload" "$work/x/linux_amd64/bulkload" || fail "the image's /usr/local/bin/bulkload is not the archive's binary"
got=$("${run[@]}" "$image" version)
[ "$got" = "$("$work/x/linux_amd64/bulkload" version)" ] || fail "the image's bulkload version '$got' differs from the archive's"
"${run[@]}" --entrypoint /usr/local/bin/bulkload "$image" version >/dev/null
set +e
"${run[@]}" "$image" >"$work/default.log" 2>&1
code=$?
set -e
[ "$code" -eq 0 ] || { cat "$work/default.log"; fail "podman run --rm $image (the default command) exited $code, deploy/README.md says 0"; }
grep -q 'podman run --rm bulkload:<version>.*exits 0' "$root/deploy/README.md" || fail "deploy/README.md no longer states the default command's exit status"
vol="bulkload-check-$$"
podman volume create "$vol" >/dev/null
"${run[@]}" --read-only --read-only-tmpfs=false --user 65532 -v "$vol:/data/results" "$image" \
  upload --simulate --progress off --results /data/results/x.results.csv --summary-json /data/results/x.summary.json /samples/leads.csv >"$work/ro.log" 2>&1 \
  || { cat "$work/ro.log"; fail "upload with a read-only root as 65532 onto a volume"; }
"${run[@]}" --read-only --read-only-tmpfs=false --user 65532 -v "$vol:/data/results" "$image" summary /data/results/x.results.csv >/dev/null 2>&1 \
  || fail "bulkload summary of the results on the volume"
log "image: default command exit 0; read-only root, user 65532, results on a volume: OK"
# 4. A tagged commit (last: it replaces dist/): bulkload version says the tag.
cd "$work/src"
git tag v0.99.0-check
goreleaser build --snapshot --clean --single-target --id bulkload -o "$work/tagged" >"$work/goreleaser-tag.log" 2>&1 || { cat "$work/goreleaser-tag.log"; fail "goreleaser build on a tag"; }
got=$("$work/tagged" version)
case "$got" in
  "bulkload v0.99.0-check, revision $head, "*) log "tagged build: $got" ;;
  *) fail "on tag v0.99.0-check, bulkload version = '$got'" ;;
esac
git tag -d v0.99.0-check >/dev/null

echo "release/check.sh: OK"
