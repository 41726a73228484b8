#!/usr/bin/python3
"""Extract prose sentences from Debian's (translated) manual pages.

Output: models/langid/data/corpus.jsonl, one JSON object per manual page:
    {"lang": "de", "page": "ls.1", "path": "/usr/share/man/de/man1/ls.1.gz", "sents": [...]}

Pages are rendered with groff (-man -t, preconv) at a very wide line length so that
every paragraph is a single line, then split into sentences and filtered:
  * lines that are not indented (section headings, page header/footer) are dropped;
  * sentences that are mostly code / options / paths are dropped;
  * sentences not written in the language's script are dropped;
  * for translated pages, sentences that also occur in the English original page
    (/usr/share/man/manN/<same page>) are dropped -- po4a leaves untranslated
    paragraphs in English -- as are sentences full of English function words.

Deterministic: page lists are sorted and sampled with a fixed seed.
Usage: /usr/bin/python3 models/langid/extract_text.py [--max-pages 150] [--jobs 2]
"""
import argparse
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import unicodedata
from multiprocessing import Pool

MAN = "/usr/share/man"
# language label -> directories under /usr/share/man (English: pages of the
# `manpages` and `manpages-dev` packages, found via dpkg -L)
LANG_DIRS = {
    "de": ["de"], "fr": ["fr"], "es": ["es"], "it": ["it"], "nl": ["nl"],
    "pl": ["pl"], "pt": ["pt", "pt_BR"], "ru": ["ru"], "uk": ["uk"],
    "ja": ["ja"], "zh": ["zh_CN", "zh_TW"], "cs": ["cs"], "da": ["da"],
    "fi": ["fi"], "hu": ["hu"], "sv": ["sv"], "tr": ["tr"], "vi": ["vi"],
    "nb": ["nb"], "ro": ["ro"], "id": ["id"], "sr": ["sr"], "ko": ["ko"],
}
CJK = {"ja", "zh", "ko"}
CYRILLIC = {"ru", "uk", "sr", "mk"}

EN_FUNCTION_WORDS = {
    "the", "and", "which", "with", "this", "that", "are", "from", "will",
    "should", "when", "than", "these", "been", "have", "has", "not", "for",
    "can", "used", "file", "specified", "option", "you", "your", "by", "its",
}


def english_pages():
    out = subprocess.run(["dpkg", "-L", "manpages", "manpages-dev"],
                         capture_output=True, text=True, check=True).stdout
    pages = []
    for line in out.splitlines():
        if re.match(r"^/usr/share/man/man\d/", line) and os.path.isfile(line) \
                and not os.path.islink(line):
            pages.append(line)
    return sorted(set(pages))


def lang_pages(dirs):
    pages = []
    for d in dirs:
        root = os.path.join(MAN, d)
        for dp, _, fns in os.walk(root):
            for fn in fns:
                p = os.path.join(dp, fn)
                if os.path.islink(p):
                    continue
                pages.append(p)
    return sorted(pages)


def read_source(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    for enc in ("utf-8", "gb18030", "euc-jp", "latin-1"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            pass
    return None


def render(path):
    src = read_source(path)
    if src is None or src.lstrip().startswith(".so "):
        return None
    try:
        r = subprocess.run(
            "preconv -e UTF-8 | groff -Tutf8 -man -t -rLL=4000n -rHY=0 -P-cbou",
            shell=True, input=src.encode("utf-8"), capture_output=True,
            timeout=60, env=dict(os.environ, LANG="C.UTF-8"))
    except subprocess.TimeoutExpired:
        return None
    return r.stdout.decode("utf-8", "replace")


SENT_SPLIT = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；])")
WORDY = re.compile(r"^[\"'«»„“”‚‘’(¿¡]*[^\W\d_]+(?:[-'’][^\W\d_]+)*[\"'«»“”’)]*[.,;:!?…)]*$")


def script_of(ch):
    o = ord(ch)
    if 0x0400 <= o <= 0x04FF:
        return "cyr"
    if 0x3040 <= o <= 0x30FF:
        return "kana"
    if 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF:
        return "han"
    if 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F:
        return "hangul"
    if ch.isalpha() and (o < 0x250 or 0x1E00 <= o <= 0x1EFF):
        return "lat"
    if ch.isalpha():
        return "other"
    return None


def script_counts(s):
    """Letters of s per script (script_of), e.g. {"lat": 12, "han": 2}."""
    counts = {}
    for ch in s:
        sc = script_of(ch)
        if sc:
            counts[sc] = counts.get(sc, 0) + 1
    return counts


def native_letters(counts, lang):
    """Letters of a CJK language's own script(s): ja kana + han, zh han, ko hangul."""
    return {"ja": counts.get("kana", 0) + counts.get("han", 0), "zh": counts.get("han", 0),
            "ko": counts.get("hangul", 0)}[lang]


def good_sentence(s, lang):
    if len(s) < 6 or len(s) > 600:
        return False
    if re.search(r"https?://|www\.|@\w+\.\w|\\fB|\$\(|\w+\(\d\w*\)\s*\w+\(\d", s):
        return False
    # C prototypes / function calls with arguments (but keep "open(2)" references)
    if re.search(r"[A-Za-z_]\((?!\d\w*\))", s) or re.search(r"[;{}]\s*$|==|->|\w\[\w", s):
        return False
    counts = script_counts(s)
    letters = sum(counts.values())
    if lang in CJK:
        native = native_letters(counts, lang)
        if native < 6 or native < 0.5 * letters:
            return False
        if lang == "zh" and counts.get("kana", 0) > 0:
            return False
        if lang == "ja" and counts.get("kana", 0) == 0:
            return False  # no kana: cannot tell from Chinese, likely a fragment
        # mostly non-letters (tables, code) -> drop
        return letters >= 0.5 * len(re.sub(r"\s", "", s))
    toks = s.split()
    if len(toks) < 3:
        return False
    wordy = [t for t in toks if WORDY.match(t)]
    if len(wordy) < 3 or len(wordy) < 0.75 * len(toks):
        return False
    if lang in CYRILLIC:
        if counts.get("cyr", 0) < 0.7 * letters:
            return False
    else:
        if counts.get("lat", 0) < 0.9 * letters:
            return False
    if lang != "en":
        low = [t.strip(".,;:!?()\"'").lower() for t in toks]
        en = sum(1 for t in low if t in EN_FUNCTION_WORDS)
        if en >= 2 and en >= 0.15 * len(low):
            return False
    # mostly upper-case tokens (constants, headings)
    upper = sum(1 for t in wordy if len(t) > 1 and t.isupper())
    if upper > 0.3 * len(wordy):
        return False
    return True


def sentences(text):
    if text is None:
        return []
    out = []
    lines = text.splitlines()
    for line in lines:
        if not line.startswith(" "):  # headings, header, footer
            continue
        line = re.sub(r"\s+", " ", line).strip()
        if not line:
            continue
        for s in SENT_SPLIT.split(line):
            s = unicodedata.normalize("NFC", s.strip())
            if s:
                out.append(s)
    return out


def english_original(path):
    # /usr/share/man/<lang>/manN/<name> -> /usr/share/man/manN/<name>[.gz]
    parts = path.split("/")
    sec, name = parts[-2], parts[-1]
    base = name[:-3] if name.endswith(".gz") else name
    for cand in (os.path.join(MAN, sec, base + ".gz"), os.path.join(MAN, sec, base)):
        if os.path.exists(cand):
            return os.path.realpath(cand)
    return None


def page_id(path):
    name = os.path.basename(path)
    return name[:-3] if name.endswith(".gz") else name


_orig_cache = {}


def work(item):
    lang, path = item
    sents = sentences(render(path))
    if lang != "en" and lang not in CJK and lang not in CYRILLIC:
        # (other scripts: the script filter already removes English leftovers)
        orig = english_original(path)
        if orig:
            if orig not in _orig_cache:
                _orig_cache[orig] = set(sentences(render(orig)))
            en = _orig_cache[orig]
            sents = [s for s in sents if s not in en]
    seen = set()
    keep = []
    for s in sents:
        if s in seen or not good_sentence(s, lang):
            continue
        seen.add(s)
        keep.append(s)
    return {"lang": lang, "page": page_id(path), "path": path, "sents": keep}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-pages", type=int, default=150)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "data", "corpus.jsonl"))
    args = ap.parse_args()
    rng = random.Random(1234)
    items = []
    all_langs = {"en": english_pages()}
    for lang, dirs in LANG_DIRS.items():
        all_langs[lang] = lang_pages(dirs)
    for lang in sorted(all_langs):
        pages = all_langs[lang]
        if len(pages) > args.max_pages:
            pages = sorted(rng.sample(pages, args.max_pages))
        items += [(lang, p) for p in pages]
        print(f"{lang}: {len(all_langs[lang])} pages, using {len(pages)}", file=sys.stderr)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    stats = {}
    with Pool(args.jobs) as pool, open(args.out, "w", encoding="utf-8") as f:
        for rec in pool.imap(work, items, chunksize=4):
            if rec["sents"]:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            st = stats.setdefault(rec["lang"], [0, 0])
            st[0] += 1 if rec["sents"] else 0
            st[1] += len(rec["sents"])
    for lang in sorted(stats):
        print(f"{lang}\tpages {stats[lang][0]}\tsentences {stats[lang][1]}", file=sys.stderr)
    # which pages were used (committed as models/langid/corpus_manifest.tsv)
    manifest = os.path.join(os.path.dirname(args.out), "corpus_manifest.tsv")
    with open(args.out, encoding="utf-8") as f, open(manifest, "w", encoding="utf-8") as m:
        m.write("# lang\tpage\tpath\tsentences\tsplit  (pages actually used by extract_text.py in the committed run; "
                "split: md5(page)%10==0 -> test)\n")
        for line in f:
            rec = json.loads(line)
            split = "test" if int(hashlib.md5(rec["page"].encode("utf-8")).hexdigest()[:8], 16) % 10 == 0 else "train"
            m.write(f"{rec['lang']}\t{rec['page']}\t{rec['path']}\t{len(rec['sents'])}\t{split}\n")


if __name__ == "__main__":
    main()
