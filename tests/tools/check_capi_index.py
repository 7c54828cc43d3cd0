#!/usr/bin/env python3
"""ctest docs_capi_index: the function index of docs/guide/c-api.md (the table between
`<!-- capi-index: ... -->` and `<!-- /capi-index -->`) names every function that
capi/include/tcsolve.h and tcsolve_mpi.h declare, once, and nothing else.

    tests/tools/check_capi_index.py REPOSITORY_ROOT
"""

import os
import pathlib
import re
import sys

DECLARATION = re.compile(r"^(?!#|typedef|\s)[A-Za-z_][\w\s\*]*?\(?(tcsolve[A-Z]\w*)\)?\s*\(", re.M)
ROW = re.compile(r"^\| `(tcsolve\w+)` \|", re.M)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    root = sys.argv[1]
    declared = set()
    for header in ("tcsolve.h", "tcsolve_mpi.h"):
        declared |= set(DECLARATION.findall(pathlib.Path(root, "capi", "include", header).read_text()))
    page = pathlib.Path(root, "docs", "guide", "c-api.md").read_text()
    begin = re.search(r"^<!-- capi-index:.*-->$", page, re.M)
    end = page.find("<!-- /capi-index -->")
    if not begin or end < begin.end():
        print("docs_capi_index: docs/guide/c-api.md lacks its <!-- capi-index --> markers")
        return 1
    rows = ROW.findall(page[begin.end():end])
    problems = [f"{name} is declared in the headers but missing from the index" for name in sorted(declared - set(rows))]
    problems += [f"{name} is in the index but declared in neither header" for name in sorted(set(rows) - declared)]
    problems += [f"{name} is listed {rows.count(name)} times" for name in sorted(set(rows)) if rows.count(name) > 1]
    for p in problems:
        print(f"docs_capi_index: {p}")
    if problems:
        return 1
    print(f"docs_capi_index: the index of docs/guide/c-api.md names all {len(declared)} functions of the C API")
    return 0


if __name__ == "__main__":
    sys.exit(main())
