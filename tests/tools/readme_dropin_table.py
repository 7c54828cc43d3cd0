#!/usr/bin/env python3
"""README.md's drop-in table, generated from a recorded models.py run (its results.json) and
checked against it.

    readme_dropin_table.py RESULTS_JSON            print the table
    readme_dropin_table.py --check REPO_ROOT       README.md's table is the one its marker's
                                                   results.json gives (exit 1 when not)

The marker is an HTML comment line in README.md naming the results file:
    <!-- drop-in table: tests/tools/readme_dropin_table.py docs/runs/.../results.json -->
and the table follows it up to the first blank line. Standard library only."""
import json
import os
import re
import sys

ROWS = [  # (models.py row, the program as README names it, from the row's sizes)
    ("bert", lambda s: f"HuggingFace BERT-base training step, {s['batch']} x {s['seq']} tokens"),
    ("bert-graph", lambda s: "the same step replayed from a CUDA graph"),
    ("encoder", lambda s: f"torch.nn.TransformerEncoder SGD step ({s['layers']} x {s['d_model']}, {s['nhead']} "
                          f"heads), {s['batch']} x {s['seq']} tokens"),
    ("encoder-long", lambda s: f"the same model on {s['batch']} x {s['seq']} tokens"),
    ("mlp", lambda s: f"torch.compile MLP forward, {s['rows']} x {s['features']} x {s['features']}"),
    ("cupy-gemm", lambda s: f"CuPy `a @ b`, {s['m']}^2"),
    ("cupy-batched", lambda s: f"CuPy batched `matmul`, {s['batch']} x {s['m']}^3"),
]
MARKER = re.compile(r"^<!-- drop-in table: tests/tools/readme_dropin_table\.py (\S+) -->$")


def ms(v):
    return f"{v:.3f} ms" if v < 1 else f"{v:.2f} ms"


def table(results):
    rows = {r["row"]: r for p in results["programs"].values() for r in p["rows"]}
    out = ["| unmodified program | plain | preloaded | speedup | FP32 GEMM flops on the corrected GEMM |",
           "| --- | ---: | ---: | ---: | ---: |"]
    for key, name in ROWS:
        r = rows.get(key)
        if r is None:
            raise SystemExit(f"readme_dropin_table: row {key!r} is not in the results")
        out.append(f"| {name(r['sizes_preloaded'])} | {ms(r['ms_plain'])} | {ms(r['ms_preloaded'])} | {r['speedup']:.2f}x | "
                   f"{100 * r['share']:.1f}% |")
    return "\n".join(out)


def check(root):
    lines = open(os.path.join(root, "README.md"), encoding="utf-8").read().split("\n")
    found = [(i, m.group(1)) for i, line in enumerate(lines) for m in [MARKER.match(line)] if m]
    if len(found) != 1:
        print(f"readme_dropin_table: README.md has {len(found)} drop-in table markers, expected 1")
        return 1
    i, path = found[0]
    end = i + 1
    while end < len(lines) and lines[end].strip():
        end += 1
    have = "\n".join(lines[i + 1:end])
    want = table(json.load(open(os.path.join(root, path), encoding="utf-8")))
    if have != want:
        print(f"readme_dropin_table: README.md's drop-in table differs from {path}'s; expected:\n{want}")
        return 1
    print(f"readme_dropin_table: README.md's drop-in table is {path}'s")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        return check(argv[2])
    if len(argv) == 2 and not argv[1].startswith("-"):
        print(table(json.load(open(argv[1], encoding="utf-8"))))
        return 0
    print(__doc__)
    return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
