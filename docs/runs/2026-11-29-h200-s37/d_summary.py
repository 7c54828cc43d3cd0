"""Session 37 call d's summary (d_command.sh): medians over the rounds."""
import glob
import json
import statistics as st
import sys

O = sys.argv[1]


def load(f):
    try:
        return json.load(open(f))
    except Exception:
        return None


def med(v):
    return st.median(v) if v else float("nan")


def solves(pattern):
    t, it, plan = [], None, None
    for f in sorted(glob.glob(pattern)):
        j = load(f)
        if not j:
            continue
        t.append(j["time_s"]["total"] * 1e3)
        it = j["iterations"]
        plan = (j.get("cuda_plan") or {}).get("fp64_solves"), j.get("fp64_lu")
    return med(t), it, plan


print("FP64 path, solve --warmup, ms: n | kernel | trsm (iterations)")
for n in (256, 384, 512, 768, 1024):
    a = solves(f"{O}/json/k_{n}_kernel_*.json")
    b = solves(f"{O}/json/k_{n}_trsm_*.json")
    print(f"{n} | {a[0]:.3f} {a[2]} | {b[0]:.3f} {b[2]} ({b[1]})")
print()
print("solve --warmup, ms: n | mixed (iterations) | FP64 path, automatic solves (iterations, solves)")
for n in (2048, 2560, 3072, 4096):
    a = solves(f"{O}/json/s_{n}_fb0_*.json")
    b = solves(f"{O}/json/s_{n}_fb1000000_*.json")
    print(f"{n} | {a[0]:.3f} ({a[1]}) | {b[0]:.3f} ({b[1]}, {b[2]})")


def comp(prefix):
    a, d, info, n = [], [], None, 0
    for f in sorted(glob.glob(prefix + "_*.json")):
        j = load(f)
        if not j:
            continue
        n = j["n"]
        for r in j["results"]:
            if r.get("variant") == "auto":
                a.append(r["time_s"]["total"] * 1e3)
                info = (r["iterations"], r["fp64_lu"], r["converged"], (r.get("cuda_plan") or {}).get("fp64_solves"))
            if r.get("method") == "cusolver-dgetrf":
                d.append(r["time_s"]["total"] * 1e3)
    return med(a), med(d), info, n, a, d


print()
print("compare --variants auto: n | auto ms | (iterations, fp64_lu, converged, fp64_solves) | dgetrf+getrs ms | ratio | per round")
for n in (200, 256, 384, 512, 768, 1024, 1536, 2048, 2560, 3072, 4096):
    a, d, info, _, av, dv = comp(f"{O}/json/c_{n}")
    rounds = " ".join(f"{x / y:.3f}" for x, y in zip(av, dv))
    print(f"{n} | {a:.3f} | {info} | {d:.3f} | {a / d:.3f} | {rounds}")
print()
print("system | n | auto ms | info | dgetrf+getrs ms | ratio")
for name in "bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg".split():
    a, d, info, n, _, _ = comp(f"{O}/json/r_{name}")
    print(f"{name} | {n} | {a:.3f} | {info} | {d:.3f} | {a / d:.3f}")
