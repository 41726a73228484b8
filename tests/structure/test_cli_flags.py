#!/usr/bin/env python3
"""Every session flag is declared once (src/cli/session_flags.cpp) and says what the option table says.

Walks `glassbox VERB --help` for every subcommand: a session flag (--threads, --precision, ...) must have the
same help text in every verb that offers it, and that text must carry the reason `glassbox explain` prints for
its SessionOptions field. The sources are scanned too: no other file may declare these flags again, except
the two listed in EXEMPT (they are other options that happen to share the name).

Usage: test_cli_flags.py GLASSBOX_CLI REPO_ROOT
"""
import json
import os
import re
import subprocess
import sys

SESSION_FLAGS = {"--threads": "threads", "--opt-level": "opt_level", "--disable-pass": "disabled_passes",
                 "--precision": "precision", "--weights-cache": "weights_cache", "--pool-wait": "pool_wait",
                 "--max-memory": "max_memory"}
# (verb, flag): why it is not the session flag.
EXEMPT = {
    ("serve", "--threads"): "ServerOptions::threads (compute threads of every engine run), from the server option table",
    ("accuracy", "--precision"): "the candidate precision measured against fp32, not the session's precision",
    ("serve", "--max-memory"): "ServerOptions::max_memory (the server-wide budget), from the server option table",
    ("inspect", "--max-memory"): "the budget inspect checks a shape against (it loads without one)",
}
EXEMPT_FILES = {("src/cli/cmd_serve.cpp", "--threads"), ("src/cli/cmd_accuracy.cpp", "--precision"),
                ("src/cli/cmd_serve.cpp", "--max-memory"), ("src/cli/cmd_inspect.cpp", "--max-memory")}


def run(cli, *args):
    r = subprocess.run([cli, *args], capture_output=True, text=True, timeout=120)
    return r.stdout + r.stderr


def subcommands(cli):
    text = run(cli, "--help")
    block = text.split("Subcommands:", 1)[1] if "Subcommands:" in text else ""
    return [m.group(1) for m in re.finditer(r"^\s{2}([a-z][\w-]*)\s", block, re.M)]


def flag_help(cli, verb):
    """flag -> description, from `glassbox VERB --help` (CLI11 prints `  --name TYPE  description` per option)."""
    out = {}
    lines = run(cli, verb, "--help").splitlines()
    for k, line in enumerate(lines):
        m = re.match(r"^\s+(?:-\w,\s*)?(--[\w-]+)\b(?:[^ ]| (?! ))*?\s{2,}(\S.*)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
            continue
        # CLI11 puts the description on the next line when the name and type fill the column
        m = re.match(r"^\s+(?:-\w,\s*)?(--[\w-]+)\b[^\n]*$", line)
        if m and k + 1 < len(lines) and not lines[k + 1].lstrip().startswith("-"):
            out[m.group(1)] = lines[k + 1].strip()
    return out


def main():
    cli, root = sys.argv[1], sys.argv[2]
    problems = []
    reasons = {}
    rows = json.loads(run(cli, "explain", "--json"))
    for r in rows.get("options", rows if isinstance(rows, list) else []):
        if r.get("component") == "session":
            reasons[r["name"]] = r["reason"]
    if not reasons:
        problems.append("`glassbox explain --json` printed no session rows")
    seen = {}  # flag -> (verb, help)
    verbs = subcommands(cli)
    if len(verbs) < 10:
        problems.append(f"found only {len(verbs)} subcommands in `glassbox --help`: {verbs}")
    for verb in verbs:
        for flag, text in flag_help(cli, verb).items():
            if flag not in SESSION_FLAGS or (verb, flag) in EXEMPT:
                continue
            reason = reasons.get(SESSION_FLAGS[flag], "")
            if not reason or reason not in text:
                problems.append(f"{verb} {flag}: help does not carry the option table's reason ({reason!r}): {text!r}")
            if flag in seen and seen[flag][1] != text:
                problems.append(f"{verb} {flag}: help differs from `{seen[flag][0]} {flag}`")
            seen.setdefault(flag, (verb, text))
    for flag in SESSION_FLAGS:
        if flag not in seen:
            problems.append(f"no subcommand offers {flag}: the walk found nothing to check")
    declare = re.compile(r'add_option(?:_function<[^>]*>)?\(\s*"(--[\w-]+)"')
    for dirpath, _, files in os.walk(os.path.join(root, "src", "cli")):
        for name in files:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if rel == os.path.join("src", "cli", "session_flags.cpp"):
                continue
            with open(path, encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    for m in declare.finditer(line):
                        if m.group(1) in SESSION_FLAGS and (rel, m.group(1)) not in EXEMPT_FILES:
                            problems.append(f"{rel}:{lineno}: declares {m.group(1)} again; use add_session_flags")
            # serve's --threads goes through add_server_flag with a quoted name
            if rel.endswith("cmd_serve.cpp"):
                continue
    for p in problems:
        print(p)
    print(f"test_cli_flags: {len(verbs)} subcommands, {len(seen)} session flags checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
