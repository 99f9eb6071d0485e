#!/usr/bin/env python3
"""Relative links between the docs resolve: every `[text](path#anchor)` of README.md, BENCHMARKS.md
and docs/*.md names a file that exists and, for a Markdown page, an anchor that is one of its
headings (GitHub's anchors: lowercase, punctuation removed, spaces to '-', -1, -2 for repeats).
Links to web pages are not followed. Usage: test_links.py [REPO_ROOT]."""
import os
import re
import sys
import unittest

ROOT = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else \
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(path):
    """(line number, text) of the lines outside code fences, with inline code spans blanked."""
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if not in_fence:
                yield n, line.rstrip("\n")


def strip_code_spans(line):
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def anchor(heading_text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading_text)   # links: their text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)                              # punctuation (keeps _ and -)
    return text.replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        seen = {}
        result = set()
        for _, line in prose_lines(path):
            m = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            a = anchor(m.group(1))
            k = seen.get(a, 0)
            seen[a] = k + 1
            result.add(a if k == 0 else f"{a}-{k}")
        cache[path] = result
    return cache[path]


def pages():
    out = [os.path.join(ROOT, p) for p in ("README.md", "BENCHMARKS.md", "BENCHMARKS-history.md") if os.path.exists(os.path.join(ROOT, p))]
    docs = os.path.join(ROOT, "docs")
    out += [os.path.join(docs, f) for f in sorted(os.listdir(docs)) if f.endswith(".md")]
    return out


def broken_links():
    broken = []
    for page in pages():
        rel_page = os.path.relpath(page, ROOT)
        for n, line in prose_lines(page):
            for m in LINK.finditer(strip_code_spans(line)):
                target = m.group(1)
                if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):   # http:, mailto:
                    continue
                path, _, frag = target.partition("#")
                dest = page if not path else os.path.normpath(os.path.join(os.path.dirname(page), path))
                where = f"{rel_page}:{n}: ({target})"
                if not os.path.exists(dest):
                    broken.append(f"{where}: no file {os.path.relpath(dest, ROOT)}")
                elif frag and dest.endswith(".md") and frag.lower() not in anchors_of(dest):
                    broken.append(f"{where}: no heading with anchor #{frag} in {os.path.relpath(dest, ROOT)}")
    return broken


class DocsLinks(unittest.TestCase):
    def test_anchor_rules(self):
        self.assertEqual(anchor("Multi-host"), "multi-host")
        self.assertEqual(anchor("API (`src/rt/runtime.h`)"), "api-srcrtruntimeh")
        self.assertEqual(anchor("`chorus bench`"), "chorus-bench")
        self.assertEqual(anchor("`shm`: the segment — nothing left behind, space reserved"),
                         "shm-the-segment--nothing-left-behind-space-reserved")

    def test_every_relative_link_resolves(self):
        self.assertGreater(len(pages()), 3)
        broken = broken_links()
        self.assertEqual(broken, [], "broken links:\n" + "\n".join(broken))


if __name__ == "__main__":
    unittest.main()
