#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks the relative links of the Markdown docs: every `](path)` and `](path#anchor)` of
README.md and doc/*.md must name a file of the checkout and, for a Markdown file, a heading
that GitHub gives that anchor (lower case, punctuation dropped, spaces to hyphens, -1, -2 for
repeats). Usage: scripts/check-doc-links.py [FILE.md...]; exit status 1 on a broken link."""
import os
import re
import sys
import unicodedata

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r'\]\(([^)\s]+)\)')


def slug(text):
    # HTML tags are dropped, but not text in code spans (`<command>` reads as text there).
    parts = text.split('`')
    text = ''.join(p if i % 2 else re.sub(r'<[^>]+>', '', p) for i, p in enumerate(parts))
    text = text.strip().lower()
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in ' -_' or cat[0] in 'LN':
            out.append('-' if ch == ' ' else ch)
    return ''.join(out)


def anchors(path, cache={}):
    if path not in cache:
        found, seen, fence = set(), {}, False
        with open(path, encoding='utf-8') as f:
            for line in f:
                if line.lstrip().startswith('```'):
                    fence = not fence
                    continue
                m = None if fence else re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
                if m:
                    s = slug(m.group(1))
                    n = seen.get(s, 0)
                    seen[s] = n + 1
                    found.add(s if n == 0 else f'{s}-{n}')
                for a in re.findall(r'<a (?:name|id)="([^"]+)"', line):
                    found.add(a)
        cache[path] = found
    return cache[path]


def check(md):
    bad = 0
    fence = False
    with open(md, encoding='utf-8') as f:
        lines = f.readlines()
    for no, line in enumerate(lines, 1):
        if line.lstrip().startswith('```'):
            fence = not fence
            continue
        if fence:
            continue
        for target in LINK.findall(line):
            if re.match(r'[a-z]+:', target):
                continue
            path, _, anchor = target.partition('#')
            full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            rel = os.path.relpath(md, TOP)
            if not os.path.exists(full):
                print(f'{rel}:{no}: no file {path}')
                bad += 1
            elif anchor and full.endswith('.md') and anchor not in anchors(full):
                print(f'{rel}:{no}: no heading for #{anchor} in {os.path.relpath(full, TOP)}')
                bad += 1
    return bad


def main():
    files = sys.argv[1:] or [os.path.join(TOP, 'README.md')] + sorted(
        os.path.join(TOP, 'doc', f) for f in os.listdir(os.path.join(TOP, 'doc')) if f.endswith('.md'))
    bad = sum(check(os.path.abspath(f)) for f in files)
    print(f'check-doc-links: {len(files)} files, {bad} broken link(s)')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
