"""Session 38 call a's summary (a_command.sh): medians over the rounds (session 37 d_summary.py's, the residuals column added)."""
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
                plan = r.get("cuda_plan") or {}
                info = (r["iterations"], r["fp64_lu"], r["converged"], plan.get("fp64_solves"), plan.get("residuals"))
            if r.get("method") == "cusolver-dgetrf":
                d.append(r["time_s"]["total"] * 1e3)
    return med(a), med(d), info, n, a, d


print("compare --variants auto: n | auto ms | (iterations, fp64_lu, converged, fp64_solves, residuals) | dgetrf+getrs ms | ratio | per round")
for n in (200, 256, 384, 512, 768, 1024, 1536, 2048, 2560, 3072, 4096):
    a, d, info, _, av, dv = comp(f"{O}/json/c_{n}")
    rounds = " ".join(f"{x / y:.3f}" for x, y in zip(av, dv))
    print(f"{n} | {a:.3f} | {info} | {d:.3f} | {a / d:.3f} | {rounds}")
print()
print("system | n | auto ms | info | dgetrf+getrs ms | ratio")
for name in "bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg".split():
    a, d, info, n, _, _ = comp(f"{O}/json/r_{name}")
    print(f"{name} | {n} | {a:.3f} | {info} | {d:.3f} | {a / d:.3f}")


def phases(pattern):
    out = {}
    for f in sorted(glob.glob(pattern)):
        j = load(f)
        if not j:
            continue
        ph = j["time_s"].get("phases", {})
        for name, v in ph.items() if isinstance(ph, dict) else ph:
            out.setdefault(name, []).append(v * 1e6)
        out.setdefault("total", []).append(j["time_s"]["total"] * 1e6)
    return {k: round(med(v), 1) for k, v in out.items()}


print()
print("solve --warmup --cuda-plan host_times=on, us (medians): n residuals | phases")
for n in (200, 512):
    for res in ("kernel", "cublas"):
        print(n, res, phases(f"{O}/json/p_{n}_{res}_*.json"))
