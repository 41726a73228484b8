#!/usr/bin/env python3
"""Reports C++ files in src/ over MAX_FILE_LINES lines and function bodies over MAX_FUNCTION_LINES lines.

Known offenders are listed in tests/structure/sizes_allowlist.txt; the list may only shrink: a new offender
fails, an offender that grew past its listed size fails, and an entry that is no longer over the limit fails
too (delete it, so it cannot grow back); lower an entry's size when you shrink it. Function bodies are found with a brace scanner that skips comments,
strings and character literals: a `{` at namespace or class level whose statement ends with a parameter list
(not a class, namespace, enum, initializer or control statement) opens a function, and its lines run to the
matching `}` (lambdas and local classes count towards the function that holds them).

Usage: check_sizes.py [REPO_ROOT] [--list]   (--list prints every offender in the allowlist's format)
"""
import os
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
# The allowlist may only shrink: this ceiling is its current length; lower it when an entry goes, never raise it.
MAX_ALLOWLIST_ENTRIES = 19


def strip_code(text):
    """Blanks comments, string and char literals (keeping newlines) so braces and parens are structural."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                end = n if end < 0 else end + len(m.group(1)) + 2
                out.append(re.sub(r"[^\n]", " ", text[i:end])); i = end
            else:
                out.append(c); i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + (c if j < n else "")); i = j + 1
        else:
            out.append(c); i += 1
    return "".join(out)


def looks_like_function(head):
    """A statement head that a function body follows: `... name(params) [const|noexcept|override|-> T|: inits]`."""
    if "(" not in head or re.match(r"^(namespace|class|struct|union|enum|extern)\b", head):
        return False
    before = head.split("(", 1)[0]
    if "=" in before or re.search(r"\b(if|for|while|switch|catch|return)\s*$", before):
        return False
    # drop a constructor's initializer list and trailing qualifiers, then require the head to end a parameter list
    tail = re.sub(r"\)\s*:\s.*$", ")", head, flags=re.S)
    tail = re.sub(r"\s*(const|noexcept|override|final|mutable|->\s*[\w:<>,*& ]+)\s*$", "", tail)
    tail = re.sub(r"\s*(const|noexcept|override|final)\s*$", "", tail)
    return tail.endswith(")")


def function_sizes(text):
    """Yields (name, first_line, lines) for each function body defined at namespace or class scope."""
    code = strip_code(text)
    stack = []  # for each open brace: ("scope" | "func" | "block", start_line, name)
    stmt_start = 0
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c in ";}" and not any(k == "func" for k, _, _ in stack):
            if c == ";":
                stmt_start = i + 1
        if c == "{":
            in_func = any(k == "func" for k, _, _ in stack)
            if in_func:
                stack.append(("block", line, ""))
                continue
            head = code[stmt_start:i].strip()
            head = re.sub(r"\s+", " ", head)
            if looks_like_function(head):
                name = re.findall(r"([~\w:]+)\s*\(", head)
                stack.append(("func", line, name[0] if name else "?"))
            else:
                stack.append(("scope", line, ""))
            stmt_start = i + 1
        elif c == "}":
            if not stack:
                continue
            kind, start, name = stack.pop()
            if kind == "func":
                yield name, start, line - start + 1
            if not any(k == "func" for k, _, _ in stack):
                stmt_start = i + 1
        elif c == ":" and not any(k == "func" for k, _, _ in stack):
            # access specifiers (public:) end a statement head; constructor initializer lists don't matter
            if re.search(r"\b(public|private|protected)\s*$", code[stmt_start:i]):
                stmt_start = i + 1


def offenders(root):
    found = {}
    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        for name in sorted(files):
            if not name.endswith((".h", ".cpp", ".inc", ".cc", ".hpp")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            nlines = text.count("\n")
            if nlines > MAX_FILE_LINES:
                found[(rel, "<file>")] = nlines
            for fname, start, size in function_sizes(text):
                if size > MAX_FUNCTION_LINES:
                    key = (rel, fname)
                    found[key] = max(size, found.get(key, 0))
    return found


def load_allowlist(path):
    entries = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.split("#", 1)[0].strip()
                if line:
                    file_, what, size = line.split()
                    entries[(file_, what)] = (int(size), lineno)
    return entries


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    found = offenders(root)
    if "--list" in sys.argv:
        for (file_, what), size in sorted(found.items()):
            print(f"{file_} {what} {size}")
        return 0
    allow_path = os.path.join("tests", "structure", "sizes_allowlist.txt")
    allow = load_allowlist(os.path.join(root, allow_path))
    bad = []
    for key, size in sorted(found.items()):
        limit = MAX_FILE_LINES if key[1] == "<file>" else MAX_FUNCTION_LINES
        if key not in allow:
            bad.append(f"{key[0]}: {key[1]} has {size} lines (limit {limit}): split it")
        elif size > allow[key][0]:
            bad.append(f"{key[0]}: {key[1]} grew to {size} lines (allowlisted at {allow[key][0]}, limit {limit})")
    for key, (size, lineno) in sorted(allow.items(), key=lambda kv: kv[1][1]):
        if key not in found:
            bad.append(f"{allow_path}:{lineno}: {key[0]} {key[1]} is within the limit now: delete the entry")
    if len(allow) > MAX_ALLOWLIST_ENTRIES:
        bad.append(f"{allow_path} has {len(allow)} entries, over the ceiling {MAX_ALLOWLIST_ENTRIES} "
                   f"(scripts/check_sizes.py): split the new offender instead")
    for b in bad:
        print(b)
    print(f"check_sizes: {len(bad)} problem(s), {len(allow)} allowlisted")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
