#!/usr/bin/env python3
"""Groups the self-containment check of the public headers into few files.

A header H "compiles on its own" when a file holding only `#include <H>` (twice,
for the include guard) compiles. A file that first includes headers H1 .. Hk,
each of which H itself includes (directly or not), and then H, checks the same
thing: H pulls in all of H1 .. Hk anyway, before its own code. So a chain
H1 < H2 < ... < Hn, each header including all the ones before it, checks every
one of them in one file, at the cost of compiling Hn alone; a file per header
compiled the upper layers' headers (about 25 s each) dozens of times over.

The op files (tensoracle/ops/<family>/<op>.hpp, over a hundred) include one
another not at all, so no chain holds two of them: each gets a file of its
own, compiled over a precompiled prelude. The prelude includes only headers
that every op file itself includes (directly or not), so by the same argument
a file of the prelude and then the op file checks the op file alone; the
prelude is parsed once instead of once per op (about 5 -> 1.5 s a file).

plan:   writes one .cpp per chain into OUT_DIR and OUT_DIR/units.txt (a chain
        a line), from the header list in HEADER_LIST (paths under INCLUDE_DIR);
        and op_unit_NNN.cpp per op file, op_prelude.hpp and op_units.txt
        (the prelude's headers on the first line, then an op file a line).
verify: fails when a header edited since the plan no longer includes the ones
        before it in its chain (the check would then be weaker): re-run CMake.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](tensoracle/[^>"]+)[>"]', re.M)


def direct_includes(include_dir):
    """Our includes of every header under INCLUDE_DIR/tensoracle (those left out
    of the check still pass includes on)."""
    headers = (str(p.relative_to(include_dir)) for p in (include_dir / "tensoracle").rglob("*.hpp"))
    return {h: set(INCLUDE.findall((include_dir / h).read_text())) for h in headers}


def closures(includes):
    """Every header each header reaches, less those that reach it back (an
    include cycle, as graph.hpp <-> control_flow.hpp, makes the order matter)."""
    reach = {}
    for h in includes:
        seen, todo = set(), [h]
        while todo:
            for d in includes.get(todo.pop(), ()):
                if d in includes and d not in seen:
                    seen.add(d)
                    todo.append(d)
        seen.discard(h)
        reach[h] = seen
    return {h: {d for d in reach[h] if h not in reach[d]} for h in includes}


def plan_chains(closure, headers):
    # The largest headers must each head a file; then each chain goes down
    # through the largest header not yet placed that its last one includes.
    size = lambda h: (len(closure[h]), h)
    left = set(headers)
    chains = []
    for top in sorted(headers, key=size, reverse=True):
        if top not in left:
            continue
        chain = [top]
        left.discard(top)
        while True:
            below = [h for h in closure[chain[-1]] if h in left]
            if not below:
                break
            chain.append(max(below, key=size))
            left.discard(chain[-1])
        chains.append(list(reversed(chain)))
    return chains


OP_FILE = re.compile(r"^tensoracle/ops/(?!detail/)[a-z0-9_]+/[a-z0-9_]+\.hpp$")


def plan_op_units(closure, op_headers, headers):
    """The prelude: every listed header that each op file reaches, largest first."""
    common = set(headers)
    for h in op_headers:
        common &= closure[h]
    return sorted(common, key=lambda h: (-len(closure[h]), h))


def write_if_changed(path, text):
    # Unchanged files keep their time stamps: a re-run of CMake rebuilds nothing.
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def invalid_links(chain, closure):
    return [(a, b) for i, b in enumerate(chain) for a in chain[:i] if a not in closure.get(b, ())]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["plan", "verify"])
    ap.add_argument("--include-dir", required=True, type=pathlib.Path)
    ap.add_argument("--out-dir", required=True, type=pathlib.Path)
    ap.add_argument("--header-list", type=pathlib.Path, help="plan: file with one header path a line")
    args = ap.parse_args()
    units = args.out_dir / "units.txt"

    if args.mode == "plan":
        headers = [h for h in args.header_list.read_text().split() if h]
        closure = closures(direct_includes(args.include_dir))
        unknown = [h for h in headers if h not in closure]
        if unknown:
            sys.exit(f"header check: {', '.join(unknown)} not under {args.include_dir}/tensoracle")
        op_headers = [h for h in headers if OP_FILE.match(h)]
        prelude = plan_op_units(closure, op_headers, headers) if op_headers else []
        # The ops' shared detail headers that include the whole prelude too are
        # checked the same way, rather than each heading a chain of its own.
        op_headers = sorted(op_headers + [h for h in headers if h.startswith("tensoracle/ops/") and h not in op_headers
                                          and h not in prelude and prelude and set(prelude) <= closure[h]])
        chains = plan_chains(closure, [h for h in headers if h not in op_headers])
        args.out_dir.mkdir(parents=True, exist_ok=True)
        names = {f"unit_{n:02d}.cpp" for n in range(len(chains))}
        for old in args.out_dir.glob("unit_*.cpp"):
            if old.name not in names:
                old.unlink()
        for n, chain in enumerate(chains):
            text = "// Generated by tests/header_units.py: each header compiles on its own\n"
            text += "// (every header here includes all the ones above it).\n"
            text += "".join(f"#include <{h}>\n#include <{h}>\n" for h in chain)
            write_if_changed(args.out_dir / f"unit_{n:02d}.cpp", text)
        units.write_text("".join(" ".join(c) + "\n" for c in chains))
        op_names = {f"op_unit_{n:03d}.cpp" for n in range(len(op_headers))}
        for old in args.out_dir.glob("op_unit_*.cpp"):
            if old.name not in op_names:
                old.unlink()
        write_if_changed(args.out_dir / "op_prelude.hpp",
                         "// Generated by tests/header_units.py: headers every op file includes itself.\n"
                         + "".join(f"#include <{h}>\n" for h in prelude))
        for n, h in enumerate(op_headers):
            write_if_changed(args.out_dir / f"op_unit_{n:03d}.cpp",
                             "// Generated by tests/header_units.py: compiles on its own (over op_prelude.hpp,\n"
                             "// which holds only headers it includes).\n" + f"#include <{h}>\n#include <{h}>\n")
        (args.out_dir / "op_units.txt").write_text(" ".join(prelude) + "\n" + "".join(h + "\n" for h in op_headers))
        print(f"header check: {len(headers)} headers in {len(chains)} files and {len(op_headers)} op files")
        return 0

    chains = [line.split() for line in units.read_text().splitlines() if line.strip()]
    headers = sorted({h for c in chains for h in c})
    missing = [h for h in headers if not (args.include_dir / h).exists()]
    if missing:
        sys.exit(f"header check: {', '.join(missing)} are gone: re-run CMake")
    closure = closures(direct_includes(args.include_dir))
    bad = [link for c in chains for link in invalid_links(c, closure)]
    op_units = args.out_dir / "op_units.txt"
    if op_units.exists():
        lines = op_units.read_text().splitlines()
        prelude, op_headers = lines[0].split(), [h for h in lines[1:] if h.strip()]
        gone = [h for h in prelude + op_headers if not (args.include_dir / h).exists()]
        if gone:
            sys.exit(f"header check: {', '.join(gone)} are gone: re-run CMake")
        bad += [(p, h) for h in op_headers for p in prelude if p not in closure.get(h, ())]
    if bad:
        sys.exit("header check: its files assume includes the headers no longer have ("
                 + "; ".join(f"{b} does not include {a}" for a, b in bad) + "): re-run CMake")
    return 0


if __name__ == "__main__":
    sys.exit(main())
