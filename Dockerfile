# ratecheck's container image: one static binary on a minimal base, run as a
# non-root user. Used by 'ratecheck kube job' (README: "Beyond one machine").
#
#   docker build -t registry.example/ratecheck:v1 --build-arg VERSION=v1 .
#
# Build stage: a static binary (no cgo, so no libc to ship).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X github.com/ratecheck/ratecheck/cmd.version=${VERSION}" \
      -o /out/ratecheck .

# Run stage: distroless static (CA certificates, /etc/passwd with nonroot,
# nothing else), as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ratecheck /usr/local/bin/ratecheck
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/ratecheck"]
