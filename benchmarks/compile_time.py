#!/usr/bin/env python3
"""Compile-time benchmark: a TU including <tensoracle/tensoracle.hpp> against a
TU including only <xtensor/xarray.hpp>, same compiler and flags, runs
interleaved (A B A B ...) so that machine noise hits both alike. Prints the
median of each and their ratio (target: <= 1.5)."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

SOURCES = {
    "xtensor only": "#include <xtensor/xarray.hpp>\nint main() { xt::xarray<float> a = {1.f}; return static_cast<int>(a(0)) - 1; }\n",
    "tensoracle umbrella": "#include <tensoracle/tensoracle.hpp>\nint main() { tensoracle::array<float> a = {1.f}; return static_cast<int>(a(0)) - 1; }\n",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("--include", default=os.path.join(os.path.dirname(__file__), "..", "include"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--flags", default="-std=c++20 -O0 -g0")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, text in SOURCES.items():
            p = os.path.join(tmp, name.replace(" ", "_") + ".cpp")
            with open(p, "w") as f:
                f.write(text)
            paths[name] = p
        times = {name: [] for name in SOURCES}
        for _ in range(args.runs):
            for name, p in paths.items():
                cmd = [args.cxx, *args.flags.split(), "-I", args.include, "-c", p, "-o", os.path.join(tmp, "out.o")]
                start = time.perf_counter()
                subprocess.run(cmd, check=True)
                times[name].append(time.perf_counter() - start)
    base = statistics.median(times["xtensor only"])
    ours = statistics.median(times["tensoracle umbrella"])
    print(f"compiler: {args.cxx} {args.flags}; {args.runs} interleaved runs each")
    for name, ts in times.items():
        print(f"  {name:20s} median {statistics.median(ts):6.3f} s  (min {min(ts):.3f}, max {max(ts):.3f})")
    ratio = ours / base
    print(f"compile-time ratio umbrella / xtensor-only: {ratio:.2f}x (target <= 1.50x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
