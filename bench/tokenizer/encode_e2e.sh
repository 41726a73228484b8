#!/usr/bin/env bash
# End-to-end `glassbox encode` vs the npm `tokenizers` binding doing the same job as a user would
# (encode_peer.js): process start, tokenizer load, JSONL in, JSONL out, 1 thread each. Checks first that both
# outputs are identical, then times RUNS pairs of whole processes in turn (peer, glassbox, peer, ...) after one
# warm-up each and prints medians of wall and CPU (user+sys) seconds and the per-pair ratio peer/glassbox.
# Usage: bench/tokenizer/encode_e2e.sh GLASSBOX_BINARY [RUNS=7] [REPEAT=14] [TOKENIZER=llama3|gemma3|FILE]
# REPEAT: the corpus (tests/data/tokenizer/corpus/*.txt, man pages in six languages) is repeated that many
# times as {"text": line} lines; 14 gives 3.77 MB of text (4.0 MB of JSONL).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$(realpath "$1")"; runs="${2:-7}"; repeat="${3:-14}"; tok="${4:-llama3}"
case "$tok" in
  llama3|gemma3) tok="$root/.peers/node_modules/@lenml/tokenizer-$tok/models/tokenizer.json" ;;
esac
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
python3 - "$root" "$repeat" "$work/in.jsonl" <<'PY'
import glob, json, sys
root, repeat, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
files = sorted(glob.glob(root + "/tests/data/tokenizer/corpus/*.txt"))
texts = [l for f in files for l in open(f, encoding="utf-8").read().split("\n") if l]
with open(out, "w", encoding="utf-8") as o:
    for _ in range(repeat):
        for t in texts: o.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
PY
export RAYON_NUM_THREADS=1
peer=(node "$root/bench/tokenizer/encode_peer.js" "$tok")
gb=("$bin" encode --tokenizer "$tok")
"${peer[@]}" < "$work/in.jsonl" > "$work/peer.jsonl"
"${gb[@]}" < "$work/in.jsonl" > "$work/gb.jsonl"
if cmp -s "$work/peer.jsonl" "$work/gb.jsonl"; then
  echo "outputs: byte-identical ($(wc -l < "$work/gb.jsonl") lines, $(stat -c %s "$work/gb.jsonl") bytes)"
else
  echo "outputs differ:"; cmp "$work/peer.jsonl" "$work/gb.jsonl" || true; exit 1
fi
python3 - "$runs" "$work/in.jsonl" "${#peer[@]}" "${peer[@]}" "${gb[@]}" <<'PY'
import os, statistics, subprocess, sys, time
runs, infile, npeer = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
peer, gb = sys.argv[4:4 + npeer], sys.argv[4 + npeer:]
def once(cmd):
    with open(infile, "rb") as i, open(os.devnull, "wb") as o:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=i, stdout=o)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    assert os.waitstatus_to_exitcode(status) == 0, cmd
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024
once(peer); once(gb)  # warm-up: page cache, node's compile cache
rows = {"peer": [], "glassbox": []}
for _ in range(runs):
    rows["peer"].append(once(peer)); rows["glassbox"].append(once(gb))
med = lambda xs: statistics.median(xs)
print(f"1-minute load average after the runs: {os.getloadavg()[0]:.2f}")
print("| impl | wall s (median, min-max) | cpu s (median, min-max) | peak RSS MB |")
print("|---|---|---|---|")
for k, v in rows.items():
    w, c, r = zip(*v)
    print(f"| {k} | {med(w):.3f} ({min(w):.3f}-{max(w):.3f}) | {med(c):.3f} ({min(c):.3f}-{max(c):.3f}) | {max(r):.0f} |")
rw = [p[0] / g[0] for p, g in zip(rows["peer"], rows["glassbox"])]
rc = [p[1] / g[1] for p, g in zip(rows["peer"], rows["glassbox"])]
print(f"speed-up peer/glassbox, per pair: wall median {med(rw):.2f}x ({min(rw):.2f}-{max(rw):.2f}), "
      f"cpu median {med(rc):.2f}x ({min(rc):.2f}-{max(rc):.2f}); {runs} pairs")
PY
