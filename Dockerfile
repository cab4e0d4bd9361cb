# The coplan image: the release binary and the example specs, for sweeps on a cluster
# (examples/scale-out/indexed-job.yaml, examples/scale-out/slurm-array.sh).
#
#   docker build -t REGISTRY/coplan:TAG .
#   docker push REGISTRY/coplan:TAG
#   docker run --rm REGISTRY/coplan:TAG coplan validate examples/clusters/paper-4090-x100.toml
#
# Nothing is fetched at run time: the binary is self-contained and the specs are baked in.

# The build and the runtime image share a Debian release: the binary links the build image's
# glibc. The toolchain is pinned so that an image rebuilt later is built the same way.
FROM rust:1.95.0-slim-bookworm AS build
WORKDIR /src

# Dependencies first, in a layer rebuilt only when the manifest or the lock file changes.
# Cargo refuses a manifest whose declared benches are missing, so the (small) bench sources
# come along; they are not compiled by `cargo build`. The crate itself is a stand-in here.
# .cargo/config.toml carries the target CPU level of every other build of this crate.
COPY Cargo.toml Cargo.lock ./
COPY .cargo .cargo
COPY benches benches
RUN mkdir src \
 && echo 'fn main() {}' > src/main.rs \
 && touch src/lib.rs \
 && cargo build --release --locked \
 && rm -rf src

# COPY keeps the files' modification times, which can be older than the stand-in's build:
# touching the crate roots makes cargo rebuild the crate from the real sources.
COPY src src
RUN touch src/lib.rs src/main.rs \
 && cargo build --release --locked

FROM debian:bookworm-slim
# A fixed numeric id: Kubernetes can check `runAsNonRoot` against it, and the Job's `fsGroup`
# uses the same group so that the results volume is writable.
RUN groupadd --gid 10001 coplan \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin coplan
COPY --from=build /src/target/release/coplan /usr/local/bin/coplan
# Owned by root and read-only to the user: the specs are inputs, results go to a volume.
COPY examples /opt/coplan/examples
# Relative spec paths (`examples/clusters/…`) resolve here, as in a checkout of the repository.
WORKDIR /opt/coplan
USER 10001:10001
# No ENTRYPOINT: the same command line `coplan sweep …` then works in a Kubernetes `command`,
# under `apptainer exec` and `srun --container-image` (which run a command, not the
# entrypoint), and `docker run -it IMAGE sh` still opens a shell for a look around.
CMD ["coplan", "--help"]
