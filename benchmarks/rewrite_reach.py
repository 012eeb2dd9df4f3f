#!/usr/bin/env python3
"""Rewrite reach: how much of what the systems rewrite a campaign's cases reach.

Runs three campaigns side by side on the same seed and count, against ONNX
Runtime with all graph optimizations and with none (the optimized graph
reported as rewritten.onnx), and with --systems torch against PyTorch eager and
TorchScript (its frozen, optimized graph reported as rewrites.json):
  before  the generator as it was: no motifs, weights initializers with the
          probability of any other leaf (0.3), every case afresh (--guide none)
  motifs  the command line's default generator (motifs, weights as
          initializers), every case afresh (--guide none)
  guided  the command line's default: the same generator and a corpus guided
          by rewrites (--guide rewrites, campaign/corpus.hpp)
and prints, for each: cases that load, cases changed by an optimization
(fusion, elimination, folding, replacement; Cast insertion, layout and expanded
functions do not count), distinct optimization kinds, signatures that only the
optimizing configuration shows, signatures new, known and judged (triage against
the kit's confirmed findings and judged discrepancies), all signatures, and cases
per second.

  benchmarks/rewrite_reach.py [--exe build/release/cli/tensoracle] [--count 2000] [--seed 2026] [--jobs 1]
                              [--systems ort,torch] [--keep DIR]
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
ap.add_argument("--systems", default="ort", help="comma-separated: ort (ONNX Runtime all vs disabled), torch (eager vs TorchScript)")
a = ap.parse_args()
SYSTEMS = {
    # name: (backends, the optimizing one, its unoptimized counterpart)
    "ort": (["onnxruntime", "onnxruntime-noopt"], "onnxruntime", "onnxruntime-noopt"),
    "torch": (["torch", "torchscript"], "torchscript", "torch"),
}

# onnxruntime-node cannot pass bfloat16 tensors: the campaign's own default without them.
dtypes = ["f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "bool"]
configs = {
    "before": ({"dtypes": dtypes, "motif_probability": 0.0, "weight_probability": 0.3}, "none"),
    "motifs": ({"dtypes": dtypes}, "none"),
    "guided": ({"dtypes": dtypes}, "rewrites"),
}
OPTIMIZATIONS = {"fusion", "elimination", "folding", "replacement"}
root = pathlib.Path(a.keep) if a.keep else pathlib.Path(tempfile.mkdtemp())
results = {}
for system in a.systems.split(","):
    backends, opt, plain = SYSTEMS[system]
    rows = {}
    for name, (cfg, guide) in configs.items():
        d = root / system / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps(cfg))
        out = d / "campaign"
        args = [a.exe, "campaign", "--quiet", "--no-reduce", "--count", str(a.count), "--seed", str(a.seed), "--jobs", str(a.jobs),
                "--config", str(d / "config.json"), "--guide", guide, "--out", str(out)]
        for b in backends:
            args += ["--backend", b]
        start = time.time()
        r = subprocess.run(args, capture_output=True, text=True)
        seconds = time.time() - start
        if r.returncode != 0:
            sys.exit(f"{system} {name}: campaign failed ({r.returncode}):\n{r.stderr}")
        s = json.loads((out / "summary.json").read_text())
        rw = s.get("rewrites", {}).get(opt, {"reported": 0, "rewritten": 0, "kinds": []})
        kinds = [k for k in rw["kinds"] if k["class"] in OPTIMIZATIONS]
        loaded = sum(v for k, v in s["backends"][opt]["outcomes"].items() if k not in ("unsupported", "compile_failure"))
        mine = [g for g in s["signatures"] if g["backend"] == opt or g["backend"].startswith(opt + " vs") or g["backend"].endswith("vs " + opt)]
        plain_ids = {g["where"] + g["outcome"] for g in s["signatures"] if g["backend"] == plain}
        only_opt = [g for g in mine if g["where"] + g["outcome"] not in plain_ids]
        triage = s.get("triage", {})
        guide_stats = s.get("guide", {})
        rows[name] = {
            "cases": s["cases"], "loaded": loaded, "reported": rw["reported"], "rewritten": rw["rewritten"],
            "kinds": len(kinds), "optimizer_only_signatures": len(only_opt),
            "optimizer_only_new": sum(1 for g in only_opt if g.get("triage", "new") == "new"),
            "signatures": len(s["signatures"]), "new": triage.get("new", 0), "known": triage.get("known", 0),
            "judged": triage.get("judged", 0), "limitations": triage.get("limitation", 0),
            "cases_per_second": s["cases"] / seconds, "seconds": seconds,
            "corpus": guide_stats.get("corpus", 0),
            "top_kinds": [(k["kind"], k["cases"]) for k in kinds[:40]],
            "optimizer_only": [(g["outcome"], g["where"], g["count"], g.get("triage", "new")) for g in only_opt],
        }
    results[system] = rows
    cols = ["cases", "loaded", "rewritten", "kinds", "optimizer_only_signatures", "optimizer_only_new", "signatures", "new", "known",
            "judged", "limitations", "corpus", "cases_per_second"]
    print(f"rewrite reach, {opt} vs {plain}, seed {a.seed}, {a.count} cases, --jobs {a.jobs}")
    print(f"{'':28}" + "".join(f"{n:>12}" for n in configs))
    for c in cols:
        vals = [rows[n][c] for n in configs]
        print(f"{c:28}" + "".join(f"{v:>12.2f}" if isinstance(v, float) else f"{v:>12}" for v in vals))
    for n in configs:
        r = rows[n]
        share = 100.0 * r["rewritten"] / max(1, r["loaded"])
        print(f"\n{system} {n}: {r['rewritten']} of {r['loaded']} loading cases rewritten by an optimization ({share:.1f}%); {r['kinds']} kinds")
        for k, c in r["top_kinds"]:
            print(f"  {c:6}  {k}")
        for o in r["optimizer_only"]:
            print(f"  optimizer only: {o[0]} {o[1]} ({o[2]} cases, {o[3]})")
    print()
json.dump(results, open(root / "rewrite_reach.json", "w"), indent=1)
print(f"folders and rewrite_reach.json: {root}")
