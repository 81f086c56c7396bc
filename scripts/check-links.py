#!/usr/bin/env python3
"""Checks every relative link of README.md and the Markdown pages under docs/ (and the other
READMEs): the file must exist, and a #fragment must name a heading of the target (GitHub's
anchors: lower case, punctuation dropped, spaces to '-'). Also that the README's C program is
examples/quickstart.c as it is. Prints each problem; exit 1 if any.
Usage: scripts/check-links.py [ROOT]   (ctest: docs_links)"""
import pathlib, re, sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
pages += [root / p for p in ("bench/README.md", "python/README.md", "webgpu/README.md",
                             "fuzz/README.md", "tests/data/README.md") if (root / p).exists()]
link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(md):
    out, seen = set(), {}
    for line in md.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*$", line)
        if not m:
            continue
        a = re.sub(r"[^\w\- ]", "", m.group(1).replace("`", "").lower()).replace(" ", "-")
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else f"{a}-{n}")
    return out


bad = 0
for page in pages:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    for target in link.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http(s):, mailto:
        path, _, frag = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            print(f"{page.relative_to(root)}: {target}: no such file")
            bad += 1
        elif frag and dest.suffix == ".md" and frag not in anchors(dest):
            print(f"{page.relative_to(root)}: {target}: no heading #{frag}")
            bad += 1
example = (root / "examples/quickstart.c").read_text(encoding="utf-8")
example = example[example.index("#include"):]
if f"```c\n{example}```" not in (root / "README.md").read_text(encoding="utf-8"):
    print("README.md: the C program differs from examples/quickstart.c (from its first #include)")
    bad += 1
print(f"{len(pages)} pages, {bad} problems")
sys.exit(1 if bad else 0)
