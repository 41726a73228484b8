#!/usr/bin/env python3
"""Checks every #include in src/ against the layer order of docs/ARCHITECTURE.md.

A file in src/<folder>/ may include its own folder, the folders below it and the public headers
(include/glassbox/*.h) that belong to its layer or a lower one. Anything else is an upward or sideways
edge and fails the check, unless tests/structure/layers_allowlist.txt lists it (each entry with the
reason it is still there). The allowlist may only shrink: an entry that no longer matches any include
also fails, so a removed edge cannot come back silently.

Usage: check_layers.py [REPO_ROOT]      exit 0 clean, 1 with the offending lines listed.
"""
import os
import re
import sys

# Layer ranks, bottom (0) to top. Folders at one rank may not include each other unless listed in SIDEWAYS.
RANK = {
    "core": 0,
    "graph": 1, "tokenizer": 1, "kernels": 1,
    "ops": 2,
    "runtime": 3,
    "pipeline": 4, "chat_template": 4, "generation": 4, "vision": 4,
    "diag": 5, "server": 5,
    "cli": 6,
}
# Same-rank edges that are part of the design (the pair, and why).
SIDEWAYS = {
    ("server", "diag"): "the server's explain route uses diag's explain builder (one builder for CLI and server)",
    ("generation", "chat_template"): "generation renders the model's chat template",
    ("generation", "pipeline"): "generation reuses the pipeline's model-directory resolution",
}
# Public headers and the layer each belongs to (a header is as high as the code that implements it).
PUBLIC = {
    "error.h": "core", "tensor.h": "core", "numerics.h": "core", "value.h": "core", "process.h": "core", "precision.h": "core",
    "version.h": "core", "kv_cache.h": "core",
    "tokenizer.h": "tokenizer",
    "session.h": "runtime", "cpu.h": "runtime", "tensor_io.h": "runtime", "numerics_checker.h": "runtime",
    "conformance.h": "runtime",
    "pipeline.h": "pipeline", "late_interaction.h": "pipeline", "embedding_heads.h": "pipeline", "memory_budget.h": "pipeline", "chat_template.h": "chat_template", "generation.h": "generation",
    "chat_prompt.h": "generation", "generation_memory.h": "generation", "generation_json.h": "generation",
    "vision.h": "vision", "vision_pipeline.h": "vision", "ocr.h": "vision",
}
# Front ends may reach the internals of these layers only through public headers.
INTERNAL_ONLY_BELOW = {"cli": 5, "diag": 4, "server": 4, "pipeline": 4, "generation": 4, "chat_template": 4, "vision": 4}

# The allowlist may only shrink: this ceiling is its current length; lower it when an entry goes, never raise it.
MAX_ALLOWLIST_ENTRIES = 7

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def target_layer(inc, root):
    parts = inc.split("/")
    if parts[0] == "glassbox" and len(parts) == 2:
        return PUBLIC.get(parts[1], "?public:" + parts[1])
    if len(parts) > 1 and os.path.isdir(os.path.join(root, "src", parts[0])):
        return parts[0]
    return None  # a system or third-party header


def allowed(src, tgt, via_public):
    if src == tgt:
        return True
    if tgt not in RANK or src not in RANK:
        return False
    if (src, tgt) in SIDEWAYS:
        return True
    if RANK[tgt] >= RANK[src]:
        return False
    # A front end reaches the layers at or below INTERNAL_ONLY_BELOW[src] through public headers only
    # (core is always allowed: it is the shared vocabulary).
    limit = INTERNAL_ONLY_BELOW.get(src)
    if limit is not None and not via_public and tgt != "core" and RANK[tgt] < limit:
        return False
    return True


def scan(root):
    edges = []  # (file:line, src_folder, include, target)
    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        for name in sorted(files):
            if not name.endswith((".h", ".cpp", ".inc", ".hpp", ".cc")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            folder = rel.split(os.sep)[1]
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    tgt = target_layer(m.group(1), root)
                    if tgt is None:
                        continue
                    edges.append((f"{rel}:{lineno}", folder, m.group(1), tgt))
    return edges


def load_allowlist(path):
    entries = {}
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if line:
                file_, inc = line.split()
                entries[(file_, inc)] = lineno
    return entries


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    allow = load_allowlist(os.path.join(root, "tests", "structure", "layers_allowlist.txt"))
    used = set()
    bad = []
    for where, src, inc, tgt in scan(root):
        if src not in RANK:
            bad.append(f"{where}: folder src/{src} has no layer in scripts/check_layers.py RANK (add it)")
            continue
        if allowed(src, tgt, inc.startswith("glassbox/")):
            continue
        key = (where.rsplit(":", 1)[0], inc)
        if key in allow:
            used.add(key)
            continue
        bad.append(f"{where}: {src} includes \"{inc}\" ({tgt}): against the layer order in docs/ARCHITECTURE.md")
    for key, lineno in sorted(allow.items()):
        if key not in used:
            bad.append(f"tests/structure/layers_allowlist.txt:{lineno}: '{key[0]} {key[1]}' no longer needed: delete it")
    if len(allow) > MAX_ALLOWLIST_ENTRIES:
        bad.append(f"tests/structure/layers_allowlist.txt has {len(allow)} entries, over the ceiling "
                   f"{MAX_ALLOWLIST_ENTRIES} (scripts/check_layers.py): remove the new upward edge instead")
    for b in bad:
        print(b)
    print(f"check_layers: {len(bad)} problem(s), {len(used)} allowlisted edge(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
