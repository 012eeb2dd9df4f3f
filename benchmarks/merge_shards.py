#!/usr/bin/env python3
"""Time of `tensoracle report --out` merging many shard folders (issue: real scale).

    benchmarks/merge_shards.py [--build DIR] [--shards 100] [--cases 1000] [--failing 0.05] [--work DIR]

Runs one real sharded campaign (shard 0 of --shards) of a planted-bug backend, so that its
folder is what a shard writes (campaign.json, summary.json, results.jsonl, cases/ of the
failing cases), then makes --shards folders of --cases lines each from it: every line of
shard i gets index i + shards * k and its own case id (cases/ copied under the new ids),
as the shards of one campaign of shards * cases cases would hold; a --failing share of the
lines are failing cases (signatures, a case folder each), the rest pass. Prints the merge's
wall time, and checks the merged summary counts every case once. Standard library only."""
import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def find_exe(arg):
    for d in ([Path(arg)] if arg else [ROOT / "build" / x for x in ("release", "rel", "debug")]):
        if (d / "cli" / "tensoracle").exists():
            return d / "cli" / "tensoracle"
    sys.exit("merge_shards: no cli/tensoracle under build/{release,rel,debug}; pass --build")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build")
    p.add_argument("--shards", type=int, default=100)
    p.add_argument("--cases", type=int, default=1000)
    p.add_argument("--failing", type=float, default=0.05)
    p.add_argument("--work", default="merge-bench")
    a = p.parse_args()
    exe = find_exe(a.build)
    work = Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    real = work / "real"
    planted = f"{exe} run-reference --plant-wrong Sigmoid --plant-crash Relu {{model}} {{inputs}} {{outputs}}"
    subprocess.run([str(exe), "campaign", "--backend-cmd", planted, "--backend-name", "planted", "--count", str(40 * a.shards),
                    "--shard", f"0/{a.shards}", "--seed", "5", "--quiet", "--no-reduce", "--out", str(real)], check=True,
                   stdout=subprocess.DEVNULL)
    shard0 = next(real.glob("shard-*"))
    template = [json.loads(l) for l in (shard0 / "results.jsonl").read_text().splitlines() if l.strip()]
    failing = [l for l in template if l.get("signatures")]
    passing = [l for l in template if not l.get("signatures")]
    if not failing or not passing:
        sys.exit("merge_shards: the real shard has no failing or no passing case to copy")
    every = max(1, round(1 / a.failing)) if a.failing > 0 else 0
    settings = json.loads((shard0 / "campaign.json").read_text())
    summary = json.loads((shard0 / "summary.json").read_text())
    dirs = []
    for i in range(a.shards):
        d = work / "shards" / f"shard-{i}-of-{a.shards}"
        (d / "cases").mkdir(parents=True)
        s = dict(settings)
        s["shard"] = {"index": i, "count": a.shards}
        (d / "campaign.json").write_text(json.dumps(s))
        summary["requested"] = a.cases
        (d / "summary.json").write_text(json.dumps(summary))
        with open(d / "results.jsonl", "w") as f:
            for k in range(a.cases):
                pool = failing if every and k % every == 0 else passing
                line = json.loads(json.dumps(pool[k % len(pool)]))
                old = line["case"]
                line["index"] = i + a.shards * k
                line["case"] = f"s5_c{line['index']:08d}"
                for sig in line.get("signatures", []):
                    sig["case"] = line["case"]
                if line.get("signatures") and (shard0 / "cases" / old).exists():
                    shutil.copytree(shard0 / "cases" / old, d / "cases" / line["case"])
                f.write(json.dumps(line) + "\n")
        dirs.append(str(d))
    merged = work / "merged"
    start = time.monotonic()
    subprocess.run([str(exe), "report", *dirs, "--out", str(merged)], check=True, stdout=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    m = json.loads((merged / "summary.json").read_text())
    total = a.shards * a.cases
    if m["cases"] != total:
        sys.exit(f"merge_shards: the merged summary counts {m['cases']} cases, not {total}")
    case_dirs = sum(1 for _ in (merged / "cases").iterdir())
    print(f"merged {a.shards} shards of {a.cases} cases ({total} lines, {case_dirs} case folders, "
          f"{len(m['signatures'])} signatures) in {seconds:.1f} s with {exe}")


if __name__ == "__main__":
    main()
