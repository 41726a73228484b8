#!/usr/bin/env python3
"""Writes tests/data/tokenizer/corpus/edge.jsonl: hand-picked inputs that break tokenizers."""
import json, os
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
cases = [
    "Hello world!", "", " ", "   leading and trailing   ", "a\tb\nc\r\nd\u000be\u000cf",
    "e\u0301 (combining acute) vs \u00e9 precomposed; A\u030a\u0323 stacked marks",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dalgo",
    "family: \U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 flag: \U0001F1EB\U0001F1F7 skin: \U0001F44B\U0001F3FD",
    "CJK: 漢字かなカナ한국어 中文测试，标点。「引用」", "Thai: ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
    "Arabic: مرحبا بالعالم، كيف حالك؟ ١٢٣", "Hebrew: שלום עולם", "Devanagari: नमस्ते दुनिया",
    "control \u0001\u0002\u001f\u007f\u0085 chars", "NUL\u0000inside", "\ufeffBOM at start", "zero\u200bwidth\u200cjoin\u200d",
    "nbsp\u00a0thin\u2009ideographic\u3000space\u2028line\u2029para", "x" * 300, "ab" * 150 + " end",
    "Ünïcödé ÀÉÎÕÜ ß ẞ İstanbul ǅ ﬁ ﬀ Ω Å K", "numbers 1234567 ²³¹¼½¾ ١٢٣ ٤٥٦ 1,000.50 3.14e-10",
    "don't won't I'm you're they've he'd we'll it's DON'T", "email@example.com https://example.org/a?b=c&d=e#f",
    "[CLS] [SEP] [MASK] <s> </s> <mask> <pad> <unk> <|begin_of_text|> <bos> <eos> typed specials",
    "<|begin_of_text|>Hello<|end_of_text|>", "text<mask>text and  <mask>  spaced", "tabs\t\t\tand    spaces",
    "\n\n\nnewlines\n\n", "    ", "ﬁne ﬂow ①②③ ㍿ ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "\ud7ff\ue000\uf8ff private use",
    "emoji 😀😃😄😁 👍🏿 🏳️‍🌈", "Ελληνικά κείμενο ΣΊΣΥΦΟΣ", "Кириллица: Съешь же ещё этих мягких французских булок",
    "mixed日本語English한국어123", "a" * 120 + "é" * 50, "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "$100 + 50% = <html>&amp;</html> ^_^ `code` |pipe| ~tilde~", "ǈǋǲ titlecase; Ꙃ 𐐀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟘𝟙𝟚",
    "\u0e01\u0e34\u0e4a Thai marks; \u0915\u094d\u0937 conjunct", "trailing space ", " leading space",
]
pairs = [("What is this?", "This is a test."), ("short", "a much longer second sequence " * 5),
         ("a much longer first sequence " * 5, "short"), ("日本語の質問", "答えは英語で: yes"), ("", "empty first")]
out = os.path.join(root, "tests/data/tokenizer/corpus/edge.jsonl")
with open(out, "w", encoding="utf-8") as f:
    for c in cases:
        f.write(json.dumps({"text": c}, ensure_ascii=True) + "\n")
    for a, b in pairs:
        f.write(json.dumps({"text": a, "pair": b}, ensure_ascii=True) + "\n")
print(out, len(cases) + len(pairs))
