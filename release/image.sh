#!/usr/bin/env bash
# release/image.sh: build bulkload's image from goreleaser's linux archive
# (dist/, made by `goreleaser release --snapshot --clean` or a release) with
# Dockerfile. The image's binary and samples are the archive's, byte for
# byte; its /etc/passwd and /etc/group are release/image/etc/ as committed
# at the binary's revision (git show, never the working tree): nothing a
# checkout holds beside its tracked files (a results file, a partner's
# export dropped in samples/) can reach the image. release/check.sh checks
# that every file of the image is the archive's, a tracked file, or the CA
# bundle.
#
#   release/image.sh [DIST]        # DIST defaults to ./dist; ARCH=arm64 for the other
#
# Prints the image's name (bulkload:<version>) on its last line. Needs go
# (go version -m reads the binary's revision), git, podman (Debian:
# release/README.md names the packages) and Debian's CA bundle
# (/etc/ssl/certs/ca-certificates.crt, package ca-certificates).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dist=$(cd "${1:-$root/dist}" && pwd)
arch=${ARCH:-amd64}
archives=("$dist"/bulkload_*_linux_"$arch".tar.gz)
if [ ${#archives[@]} -ne 1 ] || [ ! -f "${archives[0]}" ]; then
  echo "image.sh: want one bulkload_*_linux_$arch.tar.gz in $dist (run goreleaser release --snapshot --clean first)" >&2
  exit 2
fi
archive=${archives[0]}
version=$(basename "$archive" "_linux_$arch.tar.gz")
version=${version#bulkload_}

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/x"
tar -C "$ctx/x" -xzf "$archive" bulkload samples
mv "$ctx/x/bulkload" "$ctx/bulkload"
rev=$(go version -m "$ctx/bulkload" | awk '$1 == "build" && $2 ~ /^vcs.revision=/ { sub(/^vcs.revision=/, "", $2); print $2 }')
if [ -z "$rev" ]; then
  echo "image.sh: the archive's binary records no vcs.revision (go version -m): build the release in a git clone" >&2
  exit 2
fi
mkdir -p "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp" "$ctx/data/in" "$ctx/data/results"
chmod 1777 "$ctx/rootfs/tmp"
mv "$ctx/x/samples" "$ctx/rootfs/samples"
for f in passwd group; do
  git -C "$root" show "$rev:release/image/etc/$f" >"$ctx/rootfs/etc/$f"
done
chmod 0644 "$ctx/rootfs/etc/passwd" "$ctx/rootfs/etc/group"
cp /etc/ssl/certs/ca-certificates.crt "$ctx/rootfs/etc/ssl/certs/"
git -C "$root" show "$rev:Dockerfile" >"$ctx/Dockerfile"
rmdir "$ctx/x"
# Reproducible layers: every file's time is the archive's.
find "$ctx" -exec touch -h -r "$archive" {} +
podman build --quiet --platform "linux/$arch" --timestamp "$(stat -c %Y "$archive")" -t "bulkload:$version" "$ctx" >&2
echo "bulkload:$version"
