#!/usr/bin/env python3
"""Where a translation unit's compile time goes, by library: clang's
-ftime-trace of one file, summarized so that a compile-time figure of
benchmarks/compile_time.py can be explained, not just stated.

For each TU it prints the phases (parsing, template instantiation, code
generation), the exclusive parse time of headers grouped by library
(xtensor, xtl, Boost.Hana, the C++ standard library, this kit, ...), and the
templates whose instantiation costs most (exclusive time, grouped by
template name without its arguments).

    python3 benchmarks/compile_profile.py --layers          # every layer umbrella, as compile_time.py --layers
    python3 benchmarks/compile_profile.py --oracle          # the one-op gradient test, typed
    python3 benchmarks/compile_profile.py --file my_test.cpp [--top 25]

Needs clang++ (14 or later); clang and g++ spend their time alike at -O0,
but the absolute figures differ from compile_time.py's g++ ones.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import compile_time  # noqa: E402  (the TUs it times)


def library_of(path, kit_include):
    p = os.path.realpath(path)
    if kit_include and p.startswith(kit_include + os.sep):
        rel = p[len(kit_include) + 1:]
        parts = rel.split(os.sep)
        return "tensoracle/" + (parts[1] if len(parts) > 2 else parts[-1])
    for key, name in (("/xtensor/", "xtensor"), ("/xtl/", "xtl"), ("/boost/hana", "Boost.Hana"),
                      ("/boost/", "Boost (other)"), ("/nlohmann/", "nlohmann-json"), ("/onnx/", "ONNX"),
                      ("/google/protobuf/", "protobuf"), ("/xsimd/", "xsimd"), ("/c++/", "C++ standard library")):
        if key in p:
            return name
    if p.startswith("/usr/include/") or p.startswith("/usr/lib/"):
        return "system C headers"
    return "other: " + os.path.basename(p)


TEMPLATE_ARGS = re.compile(r"<.*")


def template_name(detail):
    """'xt::xarray_container<...>::foo' -> 'xt::xarray_container'."""
    return TEMPLATE_ARGS.sub("", detail).strip() or detail


def exclusive_times(events):
    """Exclusive duration of each complete event (its own time minus nested ones)."""
    events = sorted(events, key=lambda e: (e["ts"], -e["dur"]))
    excl = [e["dur"] for e in events]
    stack = []
    for i, e in enumerate(events):
        while stack and events[stack[-1]]["ts"] + events[stack[-1]]["dur"] <= e["ts"]:
            stack.pop()
        if stack:
            excl[stack[-1]] -= e["dur"]
        stack.append(i)
    return list(zip(events, excl))


def profile(trace_path, kit_include, top):
    with open(trace_path) as f:
        trace = json.load(f)
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    totals = {e["name"][len("Total "):]: e["dur"] / 1e6 for e in events if e["name"].startswith("Total ")}
    main = [e for e in events if not e["name"].startswith("Total ")]
    wall = totals.get("ExecuteCompiler", 0.0)
    print(f"  total {wall:.2f} s: frontend {totals.get('Frontend', 0):.2f} s "
          f"(parsing headers {totals.get('Source', 0):.2f} s, class instantiation {totals.get('InstantiateClass', 0):.2f} s, "
          f"function instantiation {totals.get('InstantiateFunction', 0):.2f} s), "
          f"backend {totals.get('Backend', 0):.2f} s (code generation of functions {totals.get('CodeGen Function', 0):.2f} s)")
    by_lib = collections.Counter()
    by_template = collections.Counter()
    by_template_kind = collections.Counter()
    for e, ex in exclusive_times(main):
        name = e["name"]
        detail = e.get("args", {}).get("detail", "")
        if name == "Source":
            by_lib[library_of(detail, kit_include)] += ex / 1e6
        elif name in ("InstantiateClass", "InstantiateFunction", "ParseClass", "CodeGen Function"):
            key = template_name(detail)
            by_template[(name, key)] += ex / 1e6
            root = key.split("::")[0] if "::" in key else key
            by_template_kind[(name, root)] += ex / 1e6
    print("  header parsing by library (exclusive):")
    for lib, t in by_lib.most_common(top):
        print(f"    {t:6.2f} s  {lib}")
    print("  instantiation and code generation by namespace (exclusive):")
    for (kind, ns), t in by_template_kind.most_common(top):
        print(f"    {t:6.2f} s  {kind:20s} {ns}")
    print("  costliest templates (exclusive):")
    for (kind, key), t in by_template.most_common(top):
        print(f"    {t:6.2f} s  {kind:20s} {key[:110]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cxx", default="clang++")
    ap.add_argument("--include", default=os.path.join(os.path.dirname(__file__), "..", "include"))
    ap.add_argument("--flags", default="-std=c++20 -O0 -g0")
    ap.add_argument("--layers", action="store_true", help="every layer umbrella (compile_time.py --layers)")
    ap.add_argument("--oracle", action="store_true", help="the one-op gradient test (compile_time.py --oracle)")
    ap.add_argument("--file", action="append", default=[], help="a source file of your own (repeatable)")
    ap.add_argument("--only", help="only the TUs whose name contains this")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    kit_include = os.path.realpath(args.include)
    sources = {}
    if args.layers:
        sources.update(compile_time.LAYER_SOURCES)
    if args.oracle:
        sources.update(compile_time.ORACLE_SOURCES)
    if not sources and not args.file:
        sources.update(compile_time.LAYER_SOURCES)
    with tempfile.TemporaryDirectory() as tmp:
        todo = []
        for name, text in sources.items():
            p = os.path.join(tmp, re.sub(r"[^A-Za-z0-9]+", "_", name) + ".cpp")
            with open(p, "w") as f:
                f.write(text)
            todo.append((name, p))
        todo += [(f, os.path.abspath(f)) for f in args.file]
        for name, path in todo:
            if args.only and args.only not in name:
                continue
            obj = os.path.join(tmp, re.sub(r"[^A-Za-z0-9]+", "_", name) + ".o")
            cmd = [args.cxx, *args.flags.split(), "-ftime-trace", "-I", args.include, "-c", path, "-o", obj]
            subprocess.run(cmd, check=True)
            print(f"{name}:")
            profile(os.path.splitext(obj)[0] + ".json", kit_include, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
