#!/usr/bin/env bash
# Builds the tokenizer test corpus from Debian man pages (manpages, manpages-de/-fr/-ja/-ru/-zh)
# rendered with man(1). Output: tests/data/tokenizer/corpus/<lang>.txt, one paragraph a line.
# The result is committed; rerun only to refresh it (needs those Debian packages).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/tests/data/tokenizer/corpus"
mkdir -p "$out"
pages=(ls cp grep tar bash find sed)
for lang in en de fr ja ru zh_CN; do
  dir=/usr/share/man/$lang/man1; [ "$lang" = en ] && dir=/usr/share/man/man1
  : > "$out/$lang.txt"
  for p in "${pages[@]}"; do
    f=$(ls "$dir/$p.1"* 2>/dev/null | head -1 || true)
    [ -n "$f" ] || continue
    # render, drop backspace overstrikes, join wrapped lines into paragraphs
    MANWIDTH=2000 LANG=C.UTF-8 man -l -E UTF-8 "$f" 2>/dev/null | col -bx |
      awk 'NF==0 { if (p != "") print p; p=""; next } { sub(/^ +/, ""); p = (p == "" ? $0 : p " " $0) } END { if (p != "") print p }' |
      awk 'length($0) > 20 && $0 !~ /^[^ ]+\([0-9]\) /' | head -n 40 >> "$out/$lang.txt" || true
  done
  echo "$lang: $(wc -l < "$out/$lang.txt") lines, $(wc -c < "$out/$lang.txt") bytes" >&2
done
