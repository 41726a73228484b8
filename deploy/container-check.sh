#!/bin/bash
# Build deploy/Dockerfile with podman and check the image (issue #19; docs/deploy.md, "Container
# image"). Not in CI (CI cannot run podman reliably); run by hand, as root, from anywhere:
#
#   deploy/container-check.sh [--no-build] [--no-suite]
#
# 1. base image: localhost/debian:12 made with debootstrap (no registry in the sandbox), unless present;
# 2. podman build (chroot isolation, docker format so HEALTHCHECK is kept), at nice 19, with the host's
#    ccache directory mounted at /ccache when ccache is installed (the Dockerfile works without it);
# 3. the runtime image: size, ldd inside it (nothing "not found"), no compiler, user 65532, STOPSIGNAL,
#    HEALTHCHECK config;
# 4. serve the bundled model from the image (its own user, port 8080 on 127.0.0.1, host network):
#    startup time to ready, OIP infer, `podman healthcheck run`, `podman stop` -> drained, exit 0;
# 5. the server test suite (tests/server) with every server started in the image through
#    GLASSBOX_SERVE_CMD (tests/common/serve_process.py); the repository and the suite's temporary
#    folder are mounted read-only / read-write at the same paths. The server still runs as uid 65532;
#    it gets CAP_DAC_READ_SEARCH because the suite's model folders are private to root (mkdtemp and
#    pytest's tmp_path make them mode 0700).
# Environment: GLASSBOX_BIN (a host build, for the suite's CLI comparisons; default build-test),
#   GLASSBOX_TEST_SLOWDOWN (default 4 if GLASSBOX_BIN is a sanitizer build -- the suite's timeouts),
#   WORK (scratch folder, default /tmp/glassbox-container-check).
# Everything listens on 127.0.0.1; every wait is bounded; every container started is removed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="$(sed -n 's/^project(glassbox VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")"
IMAGE="localhost/glassbox:$VERSION"
BASE="localhost/debian:12"
WORK="${WORK:-/tmp/glassbox-container-check}"
PORT=8080   # the image's HEALTHCHECK asks 8080
PODMAN=(podman --runtime /usr/sbin/runc)
RUN=("${PODMAN[@]}" run --ulimit nofile=20000:20000 --ulimit nproc=1024:1024 --network host)
build=1 suite=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0; shift ;;
    --no-suite) suite=0; shift ;;
    *) echo "usage: $0 [--no-build] [--no-suite]" >&2; exit 2 ;;
  esac
done
mkdir -p "$WORK"
fail() { echo "container-check: FAIL: $*" >&2; exit 1; }
say() { echo "container-check: $*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# 1. Base image.
if ! podman image exists "$BASE"; then
  say "making $BASE with debootstrap (no registry here)"
  rm -rf "$WORK/rootfs"
  nice -n 19 debootstrap --variant=minbase bookworm "$WORK/rootfs" http://deb.debian.org/debian > "$WORK/debootstrap.log"
  rm -rf "$WORK"/rootfs/var/cache/apt/archives/*.deb "$WORK"/rootfs/var/lib/apt/lists/*
  tar -C "$WORK/rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE" > /dev/null
  rm -rf "$WORK/rootfs"
fi

# 2. Build.
if [ "$build" = 1 ]; then
  cache=()
  if command -v ccache > /dev/null; then cache=(--volume "$(ccache -k cache_dir)":/ccache); fi
  t0=$(now)
  (cd "$ROOT" && nice -n 19 podman build --isolation chroot --format docker --build-arg DEBIAN_IMAGE="$BASE" \
     --build-arg BUILD_JOBS=2 "${cache[@]}" -f deploy/Dockerfile -t "$IMAGE" .) > "$WORK/build.log" 2>&1 \
    || { tail -30 "$WORK/build.log"; fail "podman build (log: $WORK/build.log)"; }
  say "built $IMAGE in $(since "$t0") s (log: $WORK/build.log)"
  sed -n '/^ccache, this build:/,/^[^ ]*Misses/p' "$WORK/build.log"
fi
podman image exists "$IMAGE" || fail "no image $IMAGE (run without --no-build)"

# 3. What the runtime image holds.
say "image size: $(podman image inspect --format '{{.Size}}' "$IMAGE") bytes" \
    "($(podman image inspect --format '{{.Size}}' "$BASE") the base)"
config="$(podman image inspect --format 'user={{.Config.User}} stopsignal={{.Config.StopSignal}} healthcheck={{.Config.Healthcheck.Test}}' "$IMAGE")"
say "config: $config"
case "$config" in
  "user=65532:65532 stopsignal=SIGTERM healthcheck=[CMD /opt/glassbox/bin/glassbox-healthcheck 8080 /v2/health/live]") ;;
  *) fail "unexpected image config: $config" ;;
esac
ldd_out="$("${RUN[@]}" --rm --entrypoint /usr/bin/ldd "$IMAGE" /opt/glassbox/bin/glassbox)"
# shellcheck disable=SC2001
echo "$ldd_out" | sed 's/^/  ldd: /'
if echo "$ldd_out" | grep -q "not found"; then fail "a library is missing in the image"; fi
# shellcheck disable=SC2016
inside="$("${RUN[@]}" --rm --entrypoint /bin/bash "$IMAGE" -c \
  'id -u; command -v c++ g++ cc cmake apt-get dpkg curl 2>/dev/null | tr "\n" " "; echo; dpkg-query -W -f "\${Package}\n" | wc -l')"
uid="$(echo "$inside" | sed -n 1p)"; tools="$(echo "$inside" | sed -n 2p)"; npkg="$(echo "$inside" | sed -n 3p)"
say "inside: uid $uid; tools present: ${tools:-none}; $npkg Debian packages"
[ "$uid" = 65532 ] || fail "the image runs as uid $uid, not 65532"
if echo "$tools" | grep -qE "c\+\+|g\+\+|/cc |cmake|curl"; then fail "build tools in the runtime image: $tools"; fi

# 4. Serve the bundled model with the image's own user and command line (port 8080 on 127.0.0.1).
if (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2> /dev/null; then fail "port $PORT is in use here (the HEALTHCHECK asks $PORT)"; fi
name="glassbox-check-$$"
cleanup() { "${PODMAN[@]}" rm -f -t 0 "$name" > /dev/null 2>&1 || true; }
trap cleanup EXIT
t0=$(now)
"${RUN[@]}" -d --name "$name" "$IMAGE" --model-repository /opt/glassbox/share/glassbox/models \
  --host 127.0.0.1 --port $PORT > /dev/null
ready=""
for _ in $(seq 1 1200); do   # 60 s at most
  if curl -sf -o /dev/null "http://127.0.0.1:$PORT/v2/health/ready"; then ready=$(since "$t0"); break; fi
  sleep 0.05
done
[ -n "$ready" ] || { "${PODMAN[@]}" logs "$name" >&2; fail "not ready within 60 s"; }
say "ready $ready s after \`podman run\` (process start, model load, warm-up; container creation included)"
answer="$(curl -sf -H 'Content-Type: application/json' "http://127.0.0.1:$PORT/v2/models/langid/infer" \
  -d '{"inputs":[{"name":"text","datatype":"BYTES","shape":[2],"data":["Guten Morgen, wie geht es dir?","Je voudrais un café."]}],"outputs":[{"name":"label"}]}')"
say "OIP infer: $answer"
echo "$answer" | grep -q '"data":\["de","fr"\]' || fail "unexpected answer"
"${PODMAN[@]}" healthcheck run "$name" || fail "HEALTHCHECK failed"
say "HEALTHCHECK passes: $("${PODMAN[@]}" inspect --format '{{.State.Health.Status}}' "$name" 2>/dev/null || echo '?')"
t0=$(now)
"${PODMAN[@]}" stop -t 30 "$name" > /dev/null
code="$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$name")"
say "podman stop: exit $code after $(since "$t0") s; last log lines:"
"${PODMAN[@]}" logs "$name" 2>&1 | tail -3 | sed 's/^/  /'
[ "$code" = 0 ] || fail "exit $code after podman stop (SIGTERM should drain and exit 0)"
"${PODMAN[@]}" logs "$name" 2>&1 | grep -q drained || fail "no drain in the log"
cleanup

# 5. The server test suite against the image.
if [ "$suite" = 1 ]; then
  bin="${GLASSBOX_BIN:-$ROOT/build-test/src/cli/glassbox}"
  [ -x "$bin" ] || fail "GLASSBOX_BIN ($bin) is not a glassbox build (the suite's CLI comparisons need one)"
  slow="${GLASSBOX_TEST_SLOWDOWN:-1}"
  if [ -z "${GLASSBOX_TEST_SLOWDOWN:-}" ] && nm -D "$bin" 2>/dev/null | grep -q __asan_init; then slow=4; fi
  tmp="$WORK/suite-tmp"; rm -rf "$tmp"; mkdir -p "$tmp"
  export GLASSBOX_BIN="$bin" GLASSBOX_TEST_SLOWDOWN="$slow" TMPDIR="$tmp"
  export GLASSBOX_SERVE_CMD="${RUN[*]} --rm --name {name} --cap-add DAC_READ_SEARCH -v $ROOT:$ROOT:ro -v $tmp:$tmp $IMAGE"
  export GLASSBOX_SERVE_KILL="${PODMAN[*]} rm -f -t 0 {name}"
  say "tests/server with GLASSBOX_SERVE_CMD='$GLASSBOX_SERVE_CMD'"
  (cd "$ROOT" && /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/server) || fail "server suite in the container"
  left="$(podman ps -a --format '{{.Names}}' --filter name='^server-')"
  [ -z "$left" ] || fail "containers left behind by the suite: $left"
fi
say "OK"
