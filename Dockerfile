# bulkload in a container: a static binary on a distroless base, run as a
# non-root user. The default command uploads the bundled sample file to the
# built-in simulator, like the README's first command.
#
#   docker build -t bulkload .
#   docker run --rm bulkload
#   docker run --rm -v bulkload-results:/data/results -v "$PWD:/data/in:ro" \
#     -e BULKLOAD_CLIENT_SECRET bulkload upload --config /data/in/bulkload.yaml \
#     --results /data/results/leads.results.csv /data/in/leads.csv
#
# The image (deploy/README.md has the details and the Kubernetes manifests
# that use it):
#   /usr/local/bin/bulkload  the entrypoint
#   user 65532:65532         distroless "nonroot"; never root
#   /data/results            owned by 65532: mount the results volume here
#   /data/in                 owned by 65532: mount the input read-only here
#   /samples                 the sample files
#   /tmp                     the working directory
# The root filesystem may be read-only (docker run --read-only): bulkload
# writes only the paths it is given.

# The golang image builds with GOTOOLCHAIN=local: its Go must be at least
# go.mod's (1.26.8); the 1.26 tag follows the latest 1.26.x.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
# .git is part of the build context (not in .dockerignore) so that the
# binary carries its VCS revision and time: `bulkload version` reads them.
# Where .git is not a usable repository (a git worktree's .git file, a
# tarball) the build goes on without them: `bulkload version` then says
# "revision unknown".
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/bulkload ./cmd/bulkload \
 || CGO_ENABLED=0 go build -buildvcs=false -trimpath -ldflags="-s -w" -o /out/bulkload ./cmd/bulkload
RUN mkdir -p /out/data/results /out/data/in

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bulkload /usr/local/bin/bulkload
COPY --from=build /src/samples /samples
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["/usr/local/bin/bulkload"]
CMD ["upload", "--simulate", "--results", "/tmp/leads.results.csv", "/samples/leads.csv"]
