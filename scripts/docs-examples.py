#!/usr/bin/env python3
"""Runs the examples in the docs and compares what they print with what the docs show.

An example is a fenced block whose info string is `console`. Its lines starting with `$ collsim `
are commands (run from the repository root with the built binary, through /bin/sh, so a pipe
such as `| grep ...` may select lines); the lines after a command, up to the next command or the
block's end, are its expected standard output, exactly.

    scripts/docs-examples.py check  BUILD/cli/collsim [FILE.md ...]   # exit 1 on any difference
    scripts/docs-examples.py update BUILD/cli/collsim [FILE.md ...]   # rewrite the outputs

Without files, README.md, README.zh-CN.md and every docs/*.md. `make docs` runs update; the test
suite runs check, so a change in the model either updates the docs or fails the build.

Commands the docs show without their output run too, and must succeed: every `sh` block, as one
script, and every `collsim ...` in the first column of README.md's table (docs/cli.md's table
holds synopses, not commands; README.zh-CN.md must show the same ones). They run in a scratch
directory that holds the repository's `configs` and `tests` and `build/cli/collsim`, so the files
they write (-o, --plot) land there; a shell function `collsim` runs the binary. Files are checked
side by side, one per core.
"""
import concurrent.futures
import difflib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```console\s*$")
SCRIPT = re.compile(r"^```sh\s*$")
TABLE_COMMAND = re.compile(r"^\| `(collsim [^`]*)`")


def examples(lines, fence=FENCE):
    """Yields (start, end) line ranges of `fence` blocks (the lines between the fences)."""
    i = 0
    while i < len(lines):
        if fence.match(lines[i]):
            j = i + 1
            while j < len(lines) and lines[j].rstrip() != "```":
                j += 1
            yield i + 1, j
            i = j
        i += 1


def run(binary, command):
    shell = "collsim() { \"$COLLSIM\" \"$@\"; }; " + command
    env = {"COLLSIM": binary, "PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    if "COLLSIM_CONFIG_DIR" in os.environ:  # the docs test of the docs test changes a preset
        env["COLLSIM_CONFIG_DIR"] = os.environ["COLLSIM_CONFIG_DIR"]
    r = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"example failed ({r.returncode}): $ {command}\n{r.stderr}")
    return r.stdout.splitlines()


def scratch(binary):
    """A scratch directory with the repository's inputs and the binary where the docs expect it."""
    root = pathlib.Path.cwd()
    d = pathlib.Path(tempfile.mkdtemp(prefix="collsim-docs-"))
    for name in ("configs", "tests", "docs"):
        (d / name).symlink_to(root / name)
    (d / "build" / "cli").mkdir(parents=True)
    (d / "build" / "cli" / "collsim").symlink_to(binary)
    return d


def run_script(binary, script, where):
    """Runs `script` in `where`; returns None on success, else what went wrong."""
    shell = "set -e\ncollsim() { \"$COLLSIM\" \"$@\"; }\n" + script
    env = {"COLLSIM": binary, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    for key, value in os.environ.items():
        if key.startswith("OMPI_") or key.startswith("PRTE_") or key == "COLLSIM_CONFIG_DIR":
            env[key] = value
    r = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, env=env, cwd=where)
    if r.returncode == 0:
        return None
    return f"exit status {r.returncode}\n{r.stderr[-2000:]}"


def commands_without_output(path, binary):
    """Runs the sh blocks and table commands of `path`; returns (count, problems)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    scripts = [(start, "\n".join(lines[start:end])) for start, end in examples(lines, SCRIPT)]
    if path.name == "README.md":  # its table holds commands (cli.md's holds synopses)
        scripts += table_commands(lines)
    problems = []
    where = scratch(binary)
    try:
        for start, script in scripts:
            problem = run_script(binary, script, where)
            if problem:
                problems.append(f"{path}:{start}: this command of the docs fails:\n{script}\n{problem}")
    finally:
        shutil.rmtree(where)
    return len(scripts), problems


def process(path, binary, update):
    lines = path.read_text(encoding="utf-8").splitlines()
    out, pos, problems, count = [], 0, [], 0
    for start, end in examples(lines):
        out.extend(lines[pos:start])
        block = lines[start:end]
        k = 0
        while k < len(block):
            if not block[k].startswith("$ collsim "):
                raise SystemExit(f"{path}:{start + k + 1}: a console block holds commands "
                                 f"starting '$ collsim ' and their output")
            command = block[k][2:]
            k += 1
            expected = []
            while k < len(block) and not block[k].startswith("$ "):
                expected.append(block[k])
                k += 1
            actual = run(binary, command)
            count += 1
            if actual != expected:
                diff = "\n".join(difflib.unified_diff(expected, actual, "docs", "now", lineterm=""))
                problems.append(f"{path}: $ {command}\n{diff}")
            out.append("$ " + command)
            out.extend(actual)
        pos = end
    out.extend(lines[pos:])
    if update and problems:
        path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return count, problems


def table_commands(lines):
    """(line number, command) of each `collsim ...` in a table's first column."""
    return [(i + 1, m.group(1).replace("\\|", "|")) for i, line in enumerate(lines)
            if (m := TABLE_COMMAND.match(line))]


def commands(path):
    """The `$ collsim` commands of a file's console blocks, then its table's commands, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line[2:] for start, end in examples(lines) for line in lines[start:end]
            if line.startswith("$ collsim ")] + [c for _, c in table_commands(lines)]


def translations_in_step():
    """README.zh-CN.md translates README.md: the same examples in the same order."""
    en, zh = pathlib.Path("README.md"), pathlib.Path("README.zh-CN.md")
    if not (en.exists() and zh.exists()) or commands(en) == commands(zh):
        return []
    return [f"{zh}: its examples {commands(zh)} differ from {en}'s {commands(en)}; "
            f"change both READMEs together"]


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "update"):
        raise SystemExit(__doc__)
    update = sys.argv[1] == "update"
    binary = str(pathlib.Path(sys.argv[2]).resolve())
    files = [pathlib.Path(f) for f in sys.argv[3:]] or \
        [pathlib.Path("README.md"), pathlib.Path("README.zh-CN.md")] + \
        sorted(pathlib.Path("docs").glob("*.md"))
    # Files run side by side (the commands are independent); results are reported in file order.
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        jobs = [pool.submit(process, f, binary, update) for f in files] + \
               [pool.submit(commands_without_output, f, binary) for f in files]
        results = [job.result() for job in jobs]
    total = sum(n for n, _ in results)
    all_problems = ([] if sys.argv[3:] else translations_in_step()) + \
        [p for _, problems in results for p in problems]
    for p in all_problems:
        print(p)
    verb = "updated" if update else "differ"
    print(f"{total} doc examples run, {len(all_problems)} {verb}")
    return 1 if all_problems and not update else 0


if __name__ == "__main__":
    sys.exit(main())
