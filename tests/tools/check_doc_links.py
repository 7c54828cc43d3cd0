#!/usr/bin/env python3
"""ctest docs_links: no file of the repository cites a document that is not in it.

Scans the repository's text files (Markdown, sources, headers, CMake files, scripts; not build
folders, bundles, .git or the run files under docs/runs/) and checks two kinds of citation:

  - relative Markdown links, `[text](path)` or `[text](path#anchor)` in .md files: the path,
    taken from the linking file's folder, must exist inside the repository (links to http(s),
    mailto and same-page anchors are not checked; targets under docs/runs/ are run data, checked
    elsewhere);
  - mentions of Markdown documents anywhere else (in .md files: outside links),
    `docs/guide/cli.md`, `README.md`, `design.md`: the document must exist inside the repository,
    taken from the mentioning file's folder or from the repository root (a bare name may also be
    in docs/ or docs/guide/, or be the name of a run file somewhere under docs/runs/; in the run
    records docs/BENCHMARKS.md and docs/benchmark-history.md bare names are run files, not
    checked here).

A citation that leaves the repository (`../shared/...`) fails, as does one of a document that
lives outside it (ARCHITECTURE.md, STYLE.md). docs/benchmark-history.md counts as present while
it is being written (it is split off docs/BENCHMARKS.md). Names the scripts write at run time
are skipped: those after a placeholder folder in capitals (`OUT/results.md`) and, outside
Markdown, those quoted as string literals. This file itself is not scanned (it names what it
refuses).

    tests/tools/check_doc_links.py REPOSITORY_ROOT
"""

import os
import pathlib
import re
import sys

TEXT_SUFFIXES = {".md", ".h", ".hpp", ".c", ".cpp", ".cu", ".cuh", ".py", ".txt", ".cmake", ".in", ".sh",
                 ".toml", ".map", ".cfg"}
TEXT_NAMES = {"Doxyfile", "CMakeLists.txt", ".clang-format"}
SCRIPT_FOLDERS = {"scripts", ".ci", os.path.join("tests", "tools"), os.path.join("python", "tests")}
SKIPPED_FOLDERS = {".git", "__pycache__", "node_modules", os.path.join("docs", "runs")}
# May be missing while it is written (split off docs/BENCHMARKS.md by another change).
PENDING = {os.path.join("docs", "benchmark-history.md")}

LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
MENTION = re.compile(r"(?<![\w$/.{}-])((?:\.{1,2}/)*[\w][\w./-]*\.md)(?![\w/-])")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*/")  # OUT/, OUTDIR/, DIR/: a folder given at run time
SELF = os.path.join("tests", "tools", "check_doc_links.py")
# Their bare .md names are run files (`b_bench.md` in "Raw files in runs/...: ..."), some pruned.
RUN_RECORDS = {os.path.join("docs", "BENCHMARKS.md"), os.path.join("docs", "benchmark-history.md")}


def text_files(root):
    """The files to scan, as paths relative to root."""
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        keep = []
        for d in dirs:
            sub = os.path.normpath(os.path.join(rel, d))
            top = sub.split(os.sep)[0]
            if sub in SKIPPED_FOLDERS or d in SKIPPED_FOLDERS or top.startswith(("build", "bundle")):
                continue
            keep.append(d)
        dirs[:] = sorted(keep)
        for f in sorted(files):
            path = os.path.normpath(os.path.join(rel, f))
            suffix = pathlib.PurePath(f).suffix
            in_scripts = any(path.startswith(s + os.sep) for s in SCRIPT_FOLDERS)
            if suffix in TEXT_SUFFIXES or f in TEXT_NAMES or (in_scripts and suffix == ""):
                yield path


def inside(root, path):
    """Whether path (absolute, normalised) lies inside root."""
    return path == root or path.startswith(root + os.sep)


def exists(root, rel):
    """Whether the repository-relative path rel names a file or folder of the repository."""
    return rel in PENDING or os.path.exists(os.path.join(root, rel))


def check_link(root, source, target):
    """The problem with a Markdown link from `source` to `target`, or None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return None  # http:, https:, mailto:, same-page anchors
    path = target.split("#", 1)[0]
    if not path:
        return None
    absolute = os.path.normpath(os.path.join(root, os.path.dirname(source), path))
    if not inside(root, absolute):
        return f"links outside the repository: ({target})"
    rel = os.path.relpath(absolute, root)
    if rel == os.path.join("docs", "runs") or rel.startswith(os.path.join("docs", "runs") + os.sep):
        return None  # run data: checked elsewhere
    if not exists(root, rel):
        return f"links to a missing file: ({target})"
    return None


def run_file_names(root):
    """The names of the files under docs/runs/ (run data that documents mention by name)."""
    names = set()
    for _, _, files in os.walk(os.path.join(root, "docs", "runs")):
        names.update(files)
    return names


def check_mention(root, source, name, runs):
    """The problem with a mention of the document `name` in `source`, or None."""
    if PLACEHOLDER.match(name) or ("/" not in name and (name in runs or source in RUN_RECORDS)):
        return None
    bases = [os.path.dirname(source), ""]
    if "/" not in name:
        bases += ["docs", os.path.join("docs", "guide")]
    outside = False
    for base in bases:
        absolute = os.path.normpath(os.path.join(root, base, name))
        if not inside(root, absolute):
            outside = True
            continue
        rel = os.path.relpath(absolute, root)
        if rel.startswith(os.path.join("docs", "runs") + os.sep):
            return None
        if exists(root, rel):
            return None
    if outside:
        return f"cites a document outside the repository: {name}"
    return f"cites a document that is not in the repository: {name}"


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    root = os.path.realpath(sys.argv[1])
    problems, files, links, mentions = [], 0, 0, 0
    runs = run_file_names(root)
    for source in text_files(root):
        if source == SELF:
            continue
        try:
            text = pathlib.Path(root, source).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        files += 1
        for number, line in enumerate(text.splitlines(), 1):
            markdown = source.endswith(".md")
            if markdown:
                for m in LINK.finditer(line):
                    links += 1
                    problem = check_link(root, source, m.group(1))
                    if problem:
                        problems.append(f"{source}:{number}: {problem}")
                # a link's text and target are the link check's: `[design.md](../design.md)`
                line = re.sub(r"\[[^\]]*\]\([^)]*\)", " ", line)
            for m in MENTION.finditer(line):
                before, after = line[:m.start()], line[m.end():]
                if not markdown and before[-1:] in "'\"" and before[-1:] == after[:1] and after[:1]:
                    continue  # a string literal: a file a program writes
                mentions += 1
                problem = check_mention(root, source, m.group(1), runs)
                if problem:
                    problems.append(f"{source}:{number}: {problem}")
    for p in problems:
        print(p)
    print(f"docs_links: {files} files, {links} Markdown links, {mentions} mentions of .md documents; "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
