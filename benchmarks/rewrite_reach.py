#!/usr/bin/env python3
"""Rewrite reach: how much of what ONNX Runtime rewrites a campaign's cases reach.

Runs two campaigns side by side on the same seed and count against ONNX Runtime
with all graph optimizations and with none (the optimized graph reported as
rewritten.onnx, read as rewrite events by campaign/rewrites.hpp):
  before  the generator as it was: no motifs, weights initializers with the
          probability of any other leaf (0.3)
  after   the command line's default: motifs spliced in, weights initializers
and prints, for each: cases that load in ORT, cases changed by an optimization
(fusion, elimination, folding, replacement; Cast insertion, layout and expanded
functions do not count), distinct optimization kinds, signatures that only the
optimizing configuration shows, all signatures, and cases per second.

  benchmarks/rewrite_reach.py [--exe build/release/cli/tensoracle] [--count 2000] [--seed 2026] [--jobs 1]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--exe", default="build/release/cli/tensoracle")
ap.add_argument("--count", type=int, default=2000)
ap.add_argument("--seed", type=int, default=2026)
ap.add_argument("--jobs", type=int, default=1)
ap.add_argument("--keep", help="keep the campaign folders under this folder")
a = ap.parse_args()

# onnxruntime-node cannot pass bfloat16 tensors: the campaign's own default without them.
dtypes = ["f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "bool"]
configs = {
    "before": {"dtypes": dtypes, "motif_probability": 0.0, "weight_probability": 0.3},
    "after": {"dtypes": dtypes},
}
OPTIMIZATIONS = {"fusion", "elimination", "folding", "replacement"}
root = pathlib.Path(a.keep) if a.keep else pathlib.Path(tempfile.mkdtemp())
rows = {}
for name, cfg in configs.items():
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(cfg))
    out = d / "campaign"
    start = time.time()
    r = subprocess.run([a.exe, "campaign", "--quiet", "--no-reduce", "--backend", "onnxruntime", "--backend", "onnxruntime-noopt",
                        "--count", str(a.count), "--seed", str(a.seed), "--jobs", str(a.jobs), "--config", str(d / "config.json"),
                        "--out", str(out)], capture_output=True, text=True)
    seconds = time.time() - start
    if r.returncode != 0:
        sys.exit(f"{name}: campaign failed ({r.returncode}):\n{r.stderr}")
    s = json.loads((out / "summary.json").read_text())
    rw = s.get("rewrites", {}).get("onnxruntime", {"reported": 0, "rewritten": 0, "kinds": []})
    kinds = [k for k in rw["kinds"] if k["class"] in OPTIMIZATIONS]
    loaded = sum(v for k, v in s["backends"]["onnxruntime"]["outcomes"].items() if k not in ("unsupported", "compile_failure"))
    only_opt = [g for g in s["signatures"] if g["backend"] == "onnxruntime" or g["backend"].startswith("onnxruntime vs")]
    noopt_ids = {g["where"] + g["outcome"] for g in s["signatures"] if g["backend"] == "onnxruntime-noopt"}
    only_opt = [g for g in only_opt if g["where"] + g["outcome"] not in noopt_ids]
    rows[name] = {
        "cases": s["cases"], "loaded": loaded, "reported": rw["reported"], "rewritten": rw["rewritten"],
        "kinds": len(kinds), "optimizer_only_signatures": len(only_opt), "signatures": len(s["signatures"]),
        "cases_per_second": s["cases"] / seconds, "seconds": seconds,
        "top_kinds": [(k["kind"], k["cases"]) for k in kinds[:40]],
    }

cols = ["cases", "loaded", "rewritten", "kinds", "optimizer_only_signatures", "signatures", "cases_per_second"]
print(f"rewrite reach, ONNX Runtime 1.30 all vs disabled, seed {a.seed}, {a.count} cases, --jobs {a.jobs}")
print(f"{'':28}" + "".join(f"{n:>12}" for n in configs))
for c in cols:
    vals = [rows[n][c] for n in configs]
    print(f"{c:28}" + "".join(f"{v:>12.2f}" if isinstance(v, float) else f"{v:>12}" for v in vals))
for n in configs:
    r = rows[n]
    share = 100.0 * r["rewritten"] / max(1, r["loaded"])
    print(f"\n{n}: {r['rewritten']} of {r['loaded']} loading cases rewritten by an optimization ({share:.1f}%); {r['kinds']} kinds")
    for k, c in r["top_kinds"]:
        print(f"  {c:6}  {k}")
json.dump(rows, open(root / "rewrite_reach.json", "w"), indent=1)
print(f"\nfolders and rewrite_reach.json: {root}")
