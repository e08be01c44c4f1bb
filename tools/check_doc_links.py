#!/usr/bin/env python3
"""Every relative link in the top-level README and docs/*.md (and the bench README the README
sends readers to) names a file or directory that exists. Anchors are not checked. Exits 1
naming each broken link."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
files = [root / "README.md", root / "benches" / "README.md", *sorted((root / "docs").glob("*.md"))]
# Inline links `[text](target)` and reference definitions `[name]: target`.
link = re.compile(r"\]\(([^)\s]+)\)|^\[[^\]]+\]:\s+(\S+)", re.M)
fence = re.compile(r"^```.*?^```", re.M | re.S)

broken = []
checked = 0
for path in files:
    text = fence.sub("", path.read_text(encoding="utf-8"))  # code blocks hold no links
    for match in link.finditer(text):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor in the same file
        checked += 1
        if not (path.parent / target.split("#", 1)[0]).exists():
            broken.append(f"{path.relative_to(root)}: {target}")
for line in broken:
    print(f"broken link: {line}", file=sys.stderr)
print(f"doc links: {checked} relative links in {len(files)} files, {len(broken)} broken")
sys.exit(1 if broken else 0)
