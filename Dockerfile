# syntax=docker/dockerfile:1
# The nearzero room server: one static Go binary (no cgo) on a distroless
# base, as a non-root user, with its SQLite database on the /data volume.
#
#   docker build -t nearzero-server .
#   docker run -d --name nearzero -p 8787:8787 -p 8787:8787/udp -v nearzero-data:/data \
#       --stop-timeout 300 nearzero-server -public-url https://play.example.com
#
# UDP 8787 is the server's STUN responder, which lets players behind NATs
# link directly; behind NAT (Docker's included) the server does not know
# the address players reach it at, so add -public-addr with it.
#
# Arguments after the image name are extra server flags (a later flag wins
# over the same one in ENTRYPOINT). Stopping: docker stop sends SIGTERM,
# which drains (no new rooms or rounds; running rounds finish for up to
# -drain-grace, 4m by default; then connections close with 1001 going
# away) and the process exits; a second signal stops at once. The stop grace
# period must cover the drain: --stop-timeout 300 (compose:
# stop_grace_period: 5m; Kubernetes: terminationGracePeriodSeconds: 300)
# covers the default 4m grace plus the closing (about 35 s at most). With a
# longer -drain-grace, raise it to that grace plus 60 s.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/nearzero-server ./server/cmd/nearzero-server \
	&& /out/nearzero-server -version \
	&& mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/nearzero-server /usr/local/bin/nearzero-server
# The volume's mount point, owned by the non-root user (uid 65532) so that a
# fresh named volume is writable.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME ["/data"]
# TCP: HTTP and the WebSockets; UDP: the datagram path (QUIC) for states.
EXPOSE 8787
EXPOSE 8787/udp
STOPSIGNAL SIGTERM
# The image has no shell or curl: the server probes itself. /healthz is 503
# while draining, so a draining container reports unhealthy (on purpose: a
# load balancer stops sending players there). If you change -addr, pass
# the same -addr here (docker run --health-cmd).
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
	CMD ["/usr/local/bin/nearzero-server", "-healthcheck", "-addr", ":8787"]
ENTRYPOINT ["/usr/local/bin/nearzero-server", "-addr", ":8787", "-db", "/data/nearzero.db"]
CMD ["-log-format", "json"]
