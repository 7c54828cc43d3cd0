"""Session 39's summary of solve/compare JSONs under DIR/json: totals, phases, iterations, growth."""
import glob
import json
import os
import sys

O = sys.argv[1]
KEYS = ["panel", "panel_update", "panel_l21", "swap", "trsm", "update_next", "update_wait", "trsm_rest", "update",
        "residual", "correction", "gmres", "condition", "transfer", "equilibrate"]


def ms(x):
    return "%.1f" % (x * 1e3) if isinstance(x, (int, float)) else "-"


def row(name, r):
    t = r["time_s"]
    ph = t.get("phases") or {}
    print("%-16s %-8s %-9s it=%-3s gmres_from=%-4s growth=%-9s bwd=%.1e tot=%s fact=%s ref=%s | %s" % (
        name, r.get("pivoting"), r.get("refinement"), r.get("iterations"), r.get("gmres_from"),
        "%.2g" % r["growth"] if r.get("growth") else "-", r.get("backward_error") or 0, ms(t["total"]),
        ms(t["factorization"]), ms(t["refinement"]),
        " ".join("%s=%s" % (k, ms(ph[k])) for k in KEYS if k in ph and k != "transfer")))


for f in sorted(glob.glob(os.path.join(O, "json", "*.json"))):
    name = os.path.basename(f)[:-5]
    try:
        j = json.load(open(f))
    except Exception as e:
        print(name, "unreadable:", e)
        continue
    if "results" in j:
        for r in j["results"]:
            label = r.get("variant") or r.get("method")
            if "pivoting" in r:
                row(name + ":" + label, r)
            else:
                print("%-16s %s tot=%s it=%s" % (name, label, ms(r["time_s"]["total"]), r.get("iterations")))
    else:
        row(name, j)
