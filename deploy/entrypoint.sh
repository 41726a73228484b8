#!/bin/bash
# Container entrypoint (deploy/Dockerfile): execs `glassbox serve` with the given flags, so the
# server is the process the container runtime signals (SIGTERM drains it; exit 0 when drained).
#
# usage: glassbox-entrypoint [--model-name NAME] [glassbox serve flags...]
#
# --model-repository DIR is passed through unchanged when DIR is a repository (one folder per
# model). When DIR itself holds model.onnx -- the layout KServe's storage-initializer writes into
# /mnt/models for one InferenceService -- it is served as one model directory under NAME
# (--model-name, required then; the ServingRuntime passes the InferenceService's name), through
# a link NAME -> DIR in a fresh folder under ${TMPDIR:-/tmp}. Nothing else is rewritten.
# GLASSBOX_BIN: the glassbox binary (default: `glassbox` on PATH; tests point it at a build).
set -euo pipefail

bin="${GLASSBOX_BIN:-glassbox}"
name=""
repo=""
args=()
need_value() {
  if [ "$2" -lt 2 ]; then
    echo "glassbox-entrypoint: $1 needs a value" >&2
    exit 2
  fi
}
while [ $# -gt 0 ]; do
  case "$1" in
    --model-name) need_value "$1" $#; name="$2"; shift 2 ;;
    --model-name=*) name="${1#*=}"; shift ;;
    --model-repository) need_value "$1" $#; repo="$2"; shift 2 ;;
    --model-repository=*) repo="${1#*=}"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

if [ -n "$repo" ] && [ -f "$repo/model.onnx" ]; then
  if [ -z "$name" ]; then
    echo "glassbox-entrypoint: $repo holds one model (model.onnx at its top, KServe's storage layout);" \
         "pass --model-name NAME to name it" >&2
    exit 2
  fi
  links="$(mktemp -d "${TMPDIR:-/tmp}/glassbox-models.XXXXXX")"
  ln -s "$(cd "$repo" && pwd)" "$links/$name"
  echo "glassbox-entrypoint: $repo is one model directory: serving it as '$name'" >&2
  exec "$bin" serve "$links/$name" "${args[@]}"
fi
if [ -n "$name" ]; then
  echo "glassbox-entrypoint: --model-name $name not used: ${repo:-no --model-repository} is not one model" \
       "directory (repository folders are served under their folder names)" >&2
fi
if [ -n "$repo" ]; then
  exec "$bin" serve --model-repository "$repo" "${args[@]}"
fi
exec "$bin" serve "${args[@]}"
