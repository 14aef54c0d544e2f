# bulkload's image: the release's own static linux binary on an empty base
# (FROM scratch: no base image to pull or pin, no shell, no package
# manager), run as the non-root user 65532. Its context is made by
# release/image.sh from goreleaser's archive, so the image and the release
# are one build line (.goreleaser.yaml's flags and ldflags). The file stays at
# the repository's root, where the design card puts it, but its build context
# is the directory release/image.sh assembles, not the checkout: a plain
# `docker build .` here has no binary to copy.
#
#   goreleaser release --snapshot --clean --skip=sign   # or a tagged release
#   release/image.sh                           # podman build, tag bulkload:<version>
#   podman run --rm bulkload:<version>         # the default command: exit 0
#   podman run --rm --read-only --user 65532 -v bulkload-results:/data/results \
#     bulkload:<version> upload --simulate --results /data/results/x.results.csv /samples/leads.csv
#
# The image (deploy/README.md, "The image"):
#   /usr/local/bin/bulkload   the entrypoint
#   user 65532:65532          "nonroot" in /etc/passwd; never root
#   /data/results             owned by 65532: mount the results volume here
#   XDG_STATE_HOME=/data/results  the state folder, so the default ledger
#                             (README.md, "Night after night") is
#                             /data/results/bulkload/ledger.sqlite, on the
#                             results volume beside the results it vouches
#                             for: the image has no HOME, and a ledger in the
#                             container's own layer would be lost with it
#                             (every later run would send every lead again)
#   /data/in                  owned by 65532: mount the input read-only here
#   /samples                  the sample files
#   /tmp                      mode 1777, the working directory
#   /etc/ssl/certs/ca-certificates.crt  the CA bundle (Debian's
#                             ca-certificates) for the service's TLS
# The root filesystem may be read-only: bulkload writes only the paths it
# is given (results, rejects, summary, metrics) and the ledger.
FROM scratch
COPY rootfs/ /
COPY --chown=65532:65532 data/ /data/
COPY bulkload /usr/local/bin/bulkload
USER 65532:65532
ENV XDG_STATE_HOME=/data/results
WORKDIR /tmp
ENTRYPOINT ["/usr/local/bin/bulkload"]
CMD ["upload", "--simulate", "--results", "/tmp/leads.results.csv", "/samples/leads.csv"]
