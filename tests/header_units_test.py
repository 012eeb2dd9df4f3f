#!/usr/bin/env python3
"""Tests tests/header_units.py on a small include tree: every header lands in
exactly one file, after only headers it includes; an edit that breaks that
assumption, or a header removed, fails `verify`."""
import pathlib
import subprocess
import sys
import tempfile

script = pathlib.Path(__file__).resolve().parent / "header_units.py"
tree = {  # header -> the headers it includes
    "a": [], "b": ["a"], "c": ["b"], "d": ["a"], "e": [],
    "x": ["y"], "y": ["x"],  # a cycle: neither may stand before the other
    "ops/f/p": ["b"], "ops/f/q": ["c", "e"],  # op files: a file each, over a prelude
}


def run(*args):
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)


def fail(message):
    sys.exit(f"header_units_test: {message}")


with tempfile.TemporaryDirectory() as tmp:
    inc, out = pathlib.Path(tmp, "include"), pathlib.Path(tmp, "units")
    (inc / "tensoracle" / "ops" / "f").mkdir(parents=True)
    for h, deps in tree.items():
        (inc / "tensoracle" / f"{h}.hpp").write_text(
            "#pragma once\n" + "".join(f'#include "tensoracle/{d}.hpp"\n' for d in deps))
    pathlib.Path(tmp, "list.txt").write_text("".join(f"tensoracle/{h}.hpp\n" for h in tree))
    args = ["--include-dir", str(inc), "--out-dir", str(out)]
    r = run("plan", *args, "--header-list", str(pathlib.Path(tmp, "list.txt")))
    if r.returncode != 0:
        fail(f"plan failed: {r.stderr}")
    chains = [[h.split("/", 1)[1][:-4] for h in line.split()] for line in (out / "units.txt").read_text().splitlines()]
    op_lines = (out / "op_units.txt").read_text().splitlines()
    prelude, ops = sorted(h.split("/", 1)[1][:-4] for h in op_lines[0].split()), [h.split("/", 1)[1][:-4] for h in op_lines[1:]]
    if prelude != ["a", "b"] or ops != ["ops/f/p", "ops/f/q"]:
        fail(f"op files apart, over the headers both include (a, b), expected: {op_lines}")
    if "#include <tensoracle/b.hpp>" not in (out / "op_prelude.hpp").read_text() or len(list(out.glob("op_unit_*.cpp"))) != 2:
        fail("a prelude header and one file per op file expected")
    placed = sorted(h for c in chains for h in c) + ops
    if sorted(placed) != sorted(tree):
        fail(f"each header once expected, got {chains}")
    def reaches(h):
        seen, todo = set(), [h]
        while todo:
            for d in tree[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen - {h} - {d for d in seen if h in tree[d]}
    for c in chains:
        for i, h in enumerate(c):
            if not set(c[:i]) <= reaches(h):
                fail(f"{h} placed after headers it does not include: {c}")
    if ["a", "b", "c"] not in chains:
        fail(f"the chain a < b < c should share one file: {chains}")
    units = sorted(out.glob("unit_*.cpp"))
    if len(units) != len(chains) or "#include <tensoracle/a.hpp>\n#include <tensoracle/a.hpp>\n" not in units[0].read_text():
        fail("one file per chain, each header included twice, expected")
    if run("verify", *args).returncode != 0:
        fail("verify fails on an unchanged tree")
    (inc / "tensoracle" / "c.hpp").write_text('#pragma once\n#include "tensoracle/a.hpp"\n')
    r = run("verify", *args)
    if r.returncode == 0 or "tensoracle/c.hpp does not include tensoracle/b.hpp" not in r.stderr:
        fail(f"verify must fail when c.hpp stops including b.hpp: {r.stderr}")
    (inc / "tensoracle" / "c.hpp").write_text('#pragma once\n#include "tensoracle/b.hpp"\n')
    (inc / "tensoracle" / "ops" / "f" / "q.hpp").write_text('#pragma once\n#include "tensoracle/e.hpp"\n')
    r = run("verify", *args)
    if r.returncode == 0 or "tensoracle/ops/f/q.hpp does not include tensoracle/a.hpp" not in r.stderr:
        fail(f"verify must fail when an op file stops including a prelude header: {r.stderr}")
    (inc / "tensoracle" / "ops" / "f" / "q.hpp").write_text('#pragma once\n#include "tensoracle/c.hpp"\n#include "tensoracle/e.hpp"\n')
    (inc / "tensoracle" / "e.hpp").unlink()
    r = run("verify", *args)
    if r.returncode == 0 or "tensoracle/e.hpp are gone" not in r.stderr:
        fail(f"verify must fail when a header is removed: {r.stderr}")
print("header_units: chains and op files valid, stale plans refused")
