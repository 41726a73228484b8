#!/usr/bin/python3
"""Extract everyday-register text from installed Debian packages (besides manual pages).

Man pages have almost no everyday vocabulary ("Guten Morgen", "umbrella"); this adds:
  * fortune cookies      fortunes + fortunes-min (en), fortunes-de/-es/-it/-pl/-ru/-cs/-br (pt)/-zh
  * gettext catalogs     every /usr/share/locale/<lang>/LC_MESSAGES/*.mo of the installed
                         packages, plus Battle for Wesnoth's (wesnoth-1.16-data, -httt, -tsg:
                         unit descriptions and campaign dialogue). English = the msgids.
  * spelling dictionaries hunspell-* word lists (stems, affix flags dropped), wnorwegian for nb

Output (models/langid/data/):
  extra.jsonl  one JSON object per DOCUMENT: {"lang", "doc", "source", "sents": [...]}
               doc = fortune file name or gettext domain ("coreutils", "wesnoth-httt"); the same
               domain is one document in every language.
  words.jsonl  {"lang", "words": [...]} per language.
  short.jsonl  (v6) one JSON object per gettext DOCUMENT: {"lang", "doc", "shorts": [...]}: the
               1-3-word messages ("Open file", "Guten Morgen", "Datei speichern"; CJK: 2-6
               characters) that the sentence filter drops for being short. Same documents, same
               split rule as extra.jsonl. A short message is kept only if it is written in its
               language's script, is not an English msgid of any catalog (case-insensitive:
               untranslated labels), is not from the iso-codes catalogs
               (names of languages, countries, currencies), and occurs (case-insensitive) in one language only -
               "Internet", "Bluetooth" or "OK" say nothing about the language.

Held-out split (train.py): a document is test iff int(md5(doc)[:8], 16) % 10 == 0 -- the same
rule as for man pages, so a test catalog is test in every language (its msgids too); a word is
test iff the same rule holds for md5("w:" + word).
Sentence filters are the man-page ones (extract_text.good_sentence: script, code, English
leftovers); gettext messages also lose accelerators, markup and printf/brace placeholders and
are dropped when untranslated (msgstr == msgid). Deterministic (sorted inputs, no sampling).
Usage: /usr/bin/python3 models/langid/extract_extra.py
"""
import gettext
import hashlib
import json
import os
import re
import subprocess
import sys
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extract_text import SENT_SPLIT, good_sentence, native_letters, script_counts, script_of  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")

FORTUNE_PACKAGES = {"fortunes": "en", "fortunes-min": "en", "fortunes-de": "de", "fortunes-es": "es", "fortunes-it": "it",
                    "fortunes-pl": "pl", "fortunes-ru": "ru", "fortunes-cs": "cs", "fortunes-br": "pt",
                    "fortunes-zh": "zh"}
FORTUNE_SKIP = re.compile(r"/(sk/|klasik-sk|ascii-?art|banner|tang300|song100)")  # Slovak, pictures, classical poems
# gettext locale directory -> label
LOCALES = {"cs": "cs", "da": "da", "de": "de", "es": "es", "fi": "fi", "fr": "fr", "hu": "hu", "id": "id",
           "it": "it", "ja": "ja", "ko": "ko", "nb": "nb", "nb_NO": "nb", "nl": "nl", "pl": "pl", "pt": "pt",
           "pt_BR": "pt", "ro": "ro", "ru": "ru", "sr": "sr", "sv": "sv", "tr": "tr", "uk": "uk", "vi": "vi",
           "zh_CN": "zh", "zh_TW": "zh"}
LOCALE_ROOTS = ["/usr/share/locale", "/usr/share/games/wesnoth/1.16/locale"]
HUNSPELL = {"cs": ["cs_CZ"], "da": ["da_DK"], "de": ["de_DE"], "en": ["en_US"], "es": ["es_ES"], "fr": ["fr_FR"],
            "hu": ["hu_HU"], "id": ["id_ID"], "it": ["it_IT"], "nl": ["nl_NL"], "pl": ["pl_PL"],
            "pt": ["pt_PT", "pt_BR"], "ro": ["ro_RO"], "ru": ["ru_RU"], "sr": ["sr_RS"], "sv": ["sv_SE"],
            "tr": ["tr_TR"], "uk": ["uk_UA"], "vi": ["vi_VN"]}
WORDLISTS = {"nb": "/usr/share/dict/bokmaal"}
MAX_SENTS_PER_DOC = 4000  # a few huge catalogs (wesnoth-units, glib) must not dominate a language


def package_files(pkg):
    r = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True)
    return r.stdout.splitlines() if r.returncode == 0 else []


def read_text(path):
    data = open(path, "rb").read()
    for enc in ("utf-8", "koi8-r", "latin-1"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            pass
    return ""


def split_sents(text):
    text = re.sub(r"\s+", " ", text).strip()
    return [unicodedata.normalize("NFC", s.strip()) for s in SENT_SPLIT.split(text) if s.strip()]


def keep(sents, lang, seen):
    out = []
    for s in sents:
        if s not in seen and good_sentence(s, lang):
            seen.add(s)
            out.append(s)
    return out[:MAX_SENTS_PER_DOC]


def fortunes():
    docs = []
    for pkg, lang in sorted(FORTUNE_PACKAGES.items()):
        files = sorted(f for f in package_files(pkg) if "/games/fortunes/" in f and os.path.isfile(f)
                       and not os.path.islink(f) and not f.endswith((".dat", ".u8")) and not FORTUNE_SKIP.search(f))
        for path in files:  # (NAME.u8 is a symlink to NAME in Debian's packages)
            cookies = re.split(r"\n%\n", read_text(path))
            # cookies are often several lines: join, then split into sentences; drop attribution lines
            sents = []
            for c in cookies:
                lines = [l for l in c.splitlines() if not re.match(r"^\s*(--|―|—)\s", l)]
                sents += split_sents(" ".join(lines))
            doc = "fortune:" + os.path.basename(path)
            docs.append({"lang": lang, "doc": doc, "source": path, "sents": sents})
    return docs


PLACEHOLDER = re.compile(r"%(\d+\$)?[-+ #0]*\d*(\.\d+)?[hlLqjzt]*[diouxXeEfgGcsSp%]|%\w+%|\{[^{}]*\}|\$\w+|\\[nt]")


def clean_message(s):
    s = re.sub(r"<[^<>]*>", " ", s)      # markup
    s = re.sub(r"\[/?\w+[^\]]*\]", " ", s)  # wesnoth [tags]
    s = PLACEHOLDER.sub(" ", s)
    s = re.sub(r"(?<!\w)[_&](?=\w)", "", s)  # accelerators: _Open, &File
    return s


SHORT_WORD = re.compile(r"^[^\W\d_]+(?:[-'’][^\W\d_]+)*$")


def short_message(m, lang):
    """The message as a short training text, or None (see short.jsonl in the module doc)."""
    m = unicodedata.normalize("NFC", re.sub(r"\s+", " ", m)).strip().rstrip(".:!?…。：！？").strip()
    if not m or "\n" in m:
        return None
    counts = script_counts(m)
    letters = sum(counts.values())
    if lang in ("ja", "zh", "ko"):
        native = native_letters(counts, lang)
        if not 2 <= len(m) <= 6 or native != len(m.replace(" ", "")) or native == 0:
            return None
        if (lang == "ja" and counts.get("kana", 0) == 0) or (lang == "zh" and counts.get("kana", 0)):
            return None
        return m
    words = m.split()
    if not 1 <= len(words) <= 3 or not all(SHORT_WORD.match(w) for w in words) or letters < 3:
        return None
    script = "cyr" if lang in ("ru", "uk", "sr") else "lat"
    if counts.get(script, 0) != letters or m.isupper():
        return None
    return m


def short_documents(by_doc, files, english):
    """short.jsonl's documents from the catalogs' messages (before sentence splitting)."""
    english_keys = {m.strip().rstrip(".:!?…").casefold() for msgs in english.values() for m in msgs}
    found = {}  # (lang, domain) -> [short...]
    langs_of = {}  # casefolded short -> {lang}
    for (lang, domain), msgs in sorted(by_doc.items()):
        if domain.startswith("iso_"):
            continue  # iso-codes: names of languages, countries, currencies - proper nouns, mostly untranslated
        for m in msgs:
            s = short_message(m, lang)
            if s and s.casefold() not in english_keys:
                found.setdefault((lang, domain), []).append(s)
                langs_of.setdefault(s.casefold(), set()).add(lang)
    for domain, msgs in sorted(english.items()):
        if domain.startswith("iso_"):
            continue
        for m in sorted(msgs):
            s = short_message(m, "en")
            if s:
                found.setdefault(("en", domain), []).append(s)
                langs_of.setdefault(s.casefold(), set()).add("en")
    docs, seen = [], {}
    for (lang, domain), shorts in sorted(found.items()):
        own = seen.setdefault(lang, set())
        keep = []
        for s in shorts:
            if len(langs_of[s.casefold()]) == 1 and s not in own:
                own.add(s)
                keep.append(s)
        if keep:
            docs.append({"lang": lang, "doc": "mo:" + domain, "shorts": keep})
    return docs


def catalogs():
    by_doc = {}  # (lang, domain) -> [msgstr...];  domain -> {msgid...} for English
    files = {}  # (lang, domain) -> catalog paths
    english = {}
    for root in LOCALE_ROOTS:
        for loc, lang in sorted(LOCALES.items()):
            d = os.path.join(root, loc, "LC_MESSAGES")
            if not os.path.isdir(d):
                continue
            for fn in sorted(os.listdir(d)):
                if not fn.endswith(".mo"):
                    continue
                domain = fn[:-3]
                try:
                    with open(os.path.join(d, fn), "rb") as f:
                        cat = gettext.GNUTranslations(f)._catalog
                except Exception:  # noqa: BLE001 - a broken catalog is skipped, not fatal
                    continue
                for k, v in sorted(cat.items(), key=lambda kv: str(kv[0])):
                    msgid = k[0] if isinstance(k, tuple) else k
                    if not msgid or not v or msgid == v:
                        continue  # header entry, empty or untranslated
                    msgid = msgid.split("\x04")[-1]  # drop msgctxt
                    by_doc.setdefault((lang, domain), []).append(clean_message(v))
                    paths = files.setdefault((lang, domain), [])
                    if not paths or paths[-1] != os.path.join(d, fn):
                        paths.append(os.path.join(d, fn))
                    english.setdefault(domain, set()).add(clean_message(msgid))
    docs = []
    for (lang, domain), msgs in sorted(by_doc.items()):
        sents = [s for m in msgs for s in split_sents(m)]
        docs.append({"lang": lang, "doc": "mo:" + domain, "source": ",".join(files[(lang, domain)]), "sents": sents})
    for domain, msgs in sorted(english.items()):
        sents = [s for m in sorted(msgs) for s in split_sents(m)]
        docs.append({"lang": "en", "doc": "mo:" + domain, "source": "gettext msgids", "sents": sents})
    return docs, short_documents(by_doc, files, english)


def dictionary_words(lang):
    words = set()
    paths = [f"/usr/share/hunspell/{n}.dic" for n in HUNSPELL.get(lang, [])]
    if lang in WORDLISTS:
        paths.append(WORDLISTS[lang])
    for p in paths:
        if not os.path.exists(p):
            continue
        enc = "utf-8"
        aff = p[:-4] + ".aff"
        if os.path.exists(aff):
            m = re.search(r"^SET\s+(\S+)", read_text(aff), re.M)
            if m:
                enc = {"ISO8859-1": "latin-1", "ISO8859-2": "iso8859-2"}.get(m.group(1), m.group(1))
        lines = open(p, "rb").read().decode(enc, "replace").splitlines()
        for i, line in enumerate(lines):
            if (i == 0 and p.endswith(".dic")) or not line or line[0] in " \t#":
                continue
            w = unicodedata.normalize("NFC", line.split("/")[0].split("\t")[0].strip())
            if len(w) < 2 or not all(ch.isalpha() or ch in "-'" for ch in w):
                continue
            if w.isupper() or (w[:1].isupper() and lang != "de"):  # acronyms; proper nouns (German nouns are capitalized)
                continue
            scripts = {script_of(ch) for ch in w if script_of(ch)}
            if scripts != ({"cyr"} if lang in ("ru", "uk", "sr") else {"lat"}):
                continue
            words.add(w)
    return sorted(words)


def main():
    os.makedirs(OUT, exist_ok=True)
    mo_docs, shorts = catalogs()
    docs = fortunes() + mo_docs
    with open(os.path.join(OUT, "short.jsonl"), "w", encoding="utf-8") as f:
        per_lang = {}
        for d in shorts:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
            per_lang[d["lang"]] = per_lang.get(d["lang"], 0) + len(d["shorts"])
        for lang, n in sorted(per_lang.items()):
            print(f"{lang}\tshort messages {n}", file=sys.stderr)
    stats = {}
    seen = {}
    with open(os.path.join(OUT, "extra.jsonl"), "w", encoding="utf-8") as f:
        for d in docs:
            d["sents"] = keep(d["sents"], d["lang"], seen.setdefault(d["lang"], set()))
            if d["sents"]:
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
                st = stats.setdefault((d["lang"], d["doc"].split(":")[0]), [0, 0])
                st[0] += 1
                st[1] += len(d["sents"])
    # which documents were used (committed as models/langid/extra_manifest.tsv)
    with open(os.path.join(OUT, "extra_manifest.tsv"), "w", encoding="utf-8") as f:
        f.write("# lang\tdoc\tsource\tsentences\tsplit  (split: md5(doc)%10==0 -> test)\n")
        for d in docs:
            if d["sents"]:
                test = int(hashlib.md5(d["doc"].encode("utf-8")).hexdigest()[:8], 16) % 10 == 0
                f.write(f"{d['lang']}\t{d['doc']}\t{d['source']}\t{len(d['sents'])}\t{'test' if test else 'train'}\n")
    with open(os.path.join(OUT, "words.jsonl"), "w", encoding="utf-8") as f:
        for lang in sorted(set(HUNSPELL) | set(WORDLISTS)):
            w = dictionary_words(lang)
            f.write(json.dumps({"lang": lang, "words": w}, ensure_ascii=False) + "\n")
            print(f"{lang}\twords {len(w)}", file=sys.stderr)
    for (lang, src), (n, s) in sorted(stats.items()):
        print(f"{lang}\t{src}\tdocs {n}\tsentences {s}", file=sys.stderr)


if __name__ == "__main__":
    main()
