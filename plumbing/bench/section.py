"""Replace one section of docs/benchmarks.md, or append it.

usage: python3 plumbing/bench/section.py DOC HEADING NEW
Replaces the lines from the line HEADING ("## tool") up to the next "## "
heading with the contents of file NEW; appends NEW when DOC has no such
heading. Every tool's bench/run.sh writes its own section with it.
"""
import sys

doc, head, new = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().rstrip("\n") + "\n"
try:
    lines = open(doc).read().splitlines(keepends=True)
except FileNotFoundError:
    lines = []
out, skip, done = [], False, False
for l in lines:
    if l.rstrip("\n") == head:
        skip, done = True, True
        out.append(new + "\n")
        continue
    if skip and l.startswith("## "):
        skip = False
    if not skip:
        out.append(l)
if not done:
    if out and not out[-1].endswith("\n\n"):
        out.append("\n")
    out.append(new)
open(doc, "w").write("".join(out).rstrip("\n") + "\n")
