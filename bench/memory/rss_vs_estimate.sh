#!/bin/sh
# Estimate (glassbox inspect MODEL_DIR --shape BxT --json) vs measured peak RSS of a separate
# `glassbox classify` process on real texts of that shape (ru_maxrss from wait4), per model and shape.
# docs/memory.md explains what the estimate counts; results go in docs/benchmarks.md.
#
# Usage: bench/memory/rss_vs_estimate.sh GLASSBOX_BIN MODEL_DIR [BxT ...]   (default shapes 1x16 4x64 8x256)
#        bench/memory/rss_vs_estimate.sh GLASSBOX_BIN MODEL.onnx NAME=D1xD2[,NAME=...] ...   (a tensor model: `glassbox run`)
# A model directory needs model.onnx + tokenizer.json + config.json (a classify or embed pipeline: glassbox.json task
# embed runs `glassbox embed`, anything else `glassbox classify`).
set -eu
here=$(dirname "$0")
bin=$1
shift
dir=$1
shift
exec /usr/bin/python3 "$here/../../tests/runtime/test_memory_rss.py" "$bin" "$dir" "$@"
