#!/usr/bin/env python3
"""ctest docs_capi_reference: Doxygen builds the C API reference from capi/include/tcsolve.h and
tcsolve_mpi.h (docs/Doxyfile) without a single warning (WARN_AS_ERROR: an undocumented function,
type, field or enum value fails), writes html/index.html and the XML of both headers, and the XML
documents every function the headers declare. Exits 77 (skipped) when doxygen is not installed.

    tests/tools/check_capi_reference.py REPOSITORY_ROOT DOXYGEN OUTPUT_DIR
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

HEADERS = {"tcsolve.h": "tcsolve_8h.xml", "tcsolve_mpi.h": "tcsolve__mpi_8h.xml"}
# A declaration at the start of a line: `tcsolveStatus_t tcsolveCreate(`, `void(tcsolveX)(`.
DECLARATION = re.compile(r"^(?!#|typedef|\s)[A-Za-z_][\w\s\*]*?\(?(tcsolve[A-Z]\w*)\)?\s*\(", re.M)


def declared(header):
    """The function names a header declares."""
    return set(DECLARATION.findall(pathlib.Path(header).read_text()))


def documented(xml_file):
    """The names of the functions and macros the Doxygen XML of one file documents."""
    names = set()
    for member in ET.parse(xml_file).getroot().iter("memberdef"):
        if member.get("kind") not in ("function", "define"):
            continue
        text = "".join(member.find("briefdescription").itertext()) + "".join(
            member.find("detaileddescription").itertext())
        if text.strip():
            names.add(member.findtext("name"))
    return names


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    root, doxygen, out = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    if not doxygen or not shutil.which(doxygen):
        print("docs_capi_reference: doxygen is not installed (Debian: apt-get install doxygen; "
              "scripts/bootstrap installs it): skipped")
        return 77
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    config = os.path.join(out, "Doxyfile")
    with open(config, "w") as f:  # the repository's configuration, this test's output folder
        f.write(f"@INCLUDE = {os.path.join(os.path.abspath(root), 'docs', 'Doxyfile')}\n"
                f"OUTPUT_DIRECTORY = {out}\n")
    run = subprocess.run([doxygen, config], cwd=root, capture_output=True, text=True)
    if run.returncode != 0 or run.stderr.strip():
        print(run.stdout + run.stderr)
        print(f"docs_capi_reference: FAILED: doxygen exited {run.returncode} with the warnings above "
              "(docs/Doxyfile treats every warning as an error: document what the headers declare)")
        return 1
    problems = []
    if not os.path.isfile(os.path.join(out, "html", "index.html")):
        problems.append("no html/index.html")
    functions = 0
    for header, xml_name in HEADERS.items():
        xml_file = os.path.join(out, "xml", xml_name)
        if not os.path.isfile(xml_file):
            problems.append(f"no xml/{xml_name} for {header}")
            continue
        names = declared(os.path.join(root, "capi", "include", header))
        functions += len(names)
        if not names:
            problems.append(f"{header}: no function declarations found (the pattern is out of date)")
        for missing in sorted(names - documented(xml_file)):
            problems.append(f"{header}: {missing} is not documented in the reference")
    for p in problems:
        print(f"docs_capi_reference: {p}")
    if problems:
        return 1
    print(f"docs_capi_reference: {functions} functions of {', '.join(HEADERS)} documented, no warning; "
          f"HTML in {out}/html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
