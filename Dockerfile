# Ferry's image: ferry-broker and ferry-operator on Debian bookworm-slim, running as an unprivileged user.
#
#   podman build -t ferry:dev .          (or docker build; scripts/images builds it and the ZooKeeper image)
#
# The broker reads /etc/ferry/broker.yaml (mounted by the chart) and FERRY_CONFIG_<KEY> environment variables;
# see docs/kubernetes.md. Nothing is written outside the data volume (/var/lib/ferry) and /tmp, so the root
# file system can be read-only. No HEALTHCHECK: Kubernetes probes the admin port's /v1/ready.

FROM debian:bookworm AS build
# The build toolchain and libraries, from the same script developers run (its build-only part), and ccache.
COPY scripts/install-deps /src/scripts/install-deps
RUN bash /src/scripts/install-deps --build-only \
    && apt-get install -y -q --no-install-recommends ccache && rm -rf /var/lib/apt/lists/*
# Only what the build reads (.dockerignore leaves out docs, charts, test scripts...), so that editing those does
# not rebuild the binaries; the compiler cache persists between builds, so a change recompiles only what it
# touches.
COPY . /src
WORKDIR /src
RUN --mount=type=cache,target=/ccache,id=ferry-ccache \
    CCACHE_DIR=/ccache cmake --preset release -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    && CCACHE_DIR=/ccache cmake --build --preset release --target ferry-broker ferry-operator \
    && install -D -s build/release/broker/src/app/ferry-broker /out/usr/bin/ferry-broker \
    && install -D -s build/release/operator/ferry-operator /out/usr/bin/ferry-operator

FROM debian:bookworm-slim
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="Ferry" \
      org.opencontainers.image.description="Kafka-compatible message broker (ferry-broker) and its Kubernetes operator (ferry-operator)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-slim"
# The shared libraries the two binaries link, and the tools for looking at a running cluster from inside it
# (kubectl exec ... -- kcat -L -b localhost:9092) that the chart's `helm test` pod uses: kcat, curl, jq.
RUN apt-get update -q \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
       libssl3 zlib1g libzstd1 liblz4-1 libsnappy1v5 libprometheus-cpp-core1.0 libyaml-cpp0.7 libprotobuf32 \
       kcat curl jq ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 ferry \
    && useradd --system --uid 10001 --gid ferry --home-dir /var/lib/ferry --no-create-home ferry \
    && install -d -o ferry -g ferry /var/lib/ferry /etc/ferry
COPY --from=build /out/ /
USER 10001:10001
WORKDIR /var/lib/ferry
# Kafka, the admin HTTP API (/metrics, /v1/ready), the schema registry, the operator's HTTP port.
EXPOSE 9092 9644 8081 8080
ENTRYPOINT ["/usr/bin/ferry-broker"]
CMD ["--config", "/etc/ferry/broker.yaml"]
