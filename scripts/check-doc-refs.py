#!/usr/bin/env python3
"""Checks that every "docs/X.md §N" cited in the repository names an existing file and section.

Usage: scripts/check-doc-refs.py  (from the repository root). Finds, in every tracked text file,
mentions of docs/X.md (or X.md / [X.md](X.md) inside docs/) followed by section numbers (§1.2,
§1.2-§1.6, "§1.4, §1.5 and §1.8"), and checks each against the numbered headings of docs/X.md
("## 1. Title", "### 1.2 Title"). Also flags references to paths outside the repository.
Prints one line per problem and exits 1 if there is any.
"""
import re
import subprocess
import sys
from pathlib import Path

files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True,
                       text=True, check=True).stdout.split()
sections = {}
for doc in Path("docs").glob("*.md"):
    nums = set()
    for line in doc.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s", line)
        if m:
            nums.add(m.group(1))
    sections[doc.name] = nums

mention = re.compile(r"(?:docs/)?\b([a-z][a-z0-9-]*\.md)\b\)?")
section = re.compile(r"§\s?(\d+(?:\.\d+)*)")
problems, checked = [], 0
for f in files:
    if f.startswith("tests/data/"):
        continue
    try:
        text = Path(f).read_text(encoding="utf-8")
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        continue
    in_docs = f.startswith("docs/")
    last = None  # (line number, doc) of the latest explicit mention, for continuation lines
    # A file that cites one doc only ("restated from docs/nccl-model.md ...; each rule names the
    # section it follows") uses bare "(§1.5)" for that doc.
    cited = set(re.findall(r"docs/([a-z][a-z0-9-]*\.md)", text)) & set(sections)
    only = cited.pop() if len(cited) == 1 and not in_docs else None
    for n, line in enumerate(text.splitlines(), 1):
        if re.search(r"\.\./shared|shared/(reference|data|CLI)", line):
            problems.append(f"{f}:{n}: points outside the repository: {line.strip()}")
        spans = []
        for m in mention.finditer(line):
            name = m.group(1)
            explicit = line[m.start():m.start() + 5] == "docs/"
            if name in sections and (explicit or in_docs):
                spans.append((m.end(), name))
        # A doc's own bare "§N" refers to itself; in code, a bare "§N" on a comment line right
        # after a mention continues that mention ("§1.4 (...), §1.5 (...),\n// §2.3 (...)").
        if in_docs and Path(f).name in sections:
            spans.insert(0, (0, Path(f).name))
        elif not spans and last and n - last[0] <= 3 and "§" in line:
            spans.insert(0, (0, last[1]))
        elif not spans and only and "§" in line:
            spans.insert(0, (0, only))
        if spans and spans[-1][0] > 0:
            last = (n, spans[-1][1])
        for i, (start, name) in enumerate(spans):
            end = spans[i + 1][0] if i + 1 < len(spans) else len(line)
            if i + 1 < len(spans):
                # stop at the next mention's start, not its end
                nxt = line.rfind(spans[i + 1][1], start, spans[i + 1][0])
                end = max(start, nxt)
            for s in section.finditer(line[start:end]):
                num = s.group(1)
                # "User Guide §1.2.3" in a source list cites an outside document.
                if "user guide" in line[max(0, start + s.start() - 20):start + s.start()].lower():
                    continue
                checked += 1
                if num not in sections[name]:
                    problems.append(f"{f}:{n}: docs/{name} has no §{num}: {line.strip()}")

print(f"checked {checked} section references against {len(sections)} docs")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
