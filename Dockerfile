# bulkload in a container: a static binary on a distroless base, run as a
# non-root user. The default command uploads the bundled sample file to the
# built-in simulator, like the README's first command.
#
#   docker build -t bulkload .
#   docker run --rm bulkload
#   docker run --rm -v "$PWD:/work" -e BULKLOAD_CLIENT_SECRET bulkload upload --config /work/bulkload.yaml /work/leads.csv

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/bulkload ./cmd/bulkload

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bulkload /usr/local/bin/bulkload
COPY --from=build /src/samples /samples
WORKDIR /tmp
ENTRYPOINT ["/usr/local/bin/bulkload"]
CMD ["upload", "--simulate", "--results", "/tmp/leads.results.csv", "/samples/leads.csv"]
