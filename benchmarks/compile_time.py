#!/usr/bin/env python3
"""Compile-time benchmark: a TU including <tensoracle/core.hpp> against a
TU including only <xtensor/xarray.hpp>, same compiler and flags, runs
interleaved (A B A B ...) so that machine noise hits both alike. Prints the
median of each and their ratio (target: <= 1.5).

With --layers, the TUs are instead empty files including each layer's
umbrella (ops/registry.hpp, graph/interpreter.hpp, ad.hpp, gen/input_search.hpp,
mutate/mutate.hpp, the whole kit tensoracle.hpp), as a user includes them and
with TENSORACLE_SEPARATE_REGISTRY (the registry instantiated elsewhere), each
against the xtensor-only TU (issue 15's target: <= 2x).

With --oracle, the TUs are instead a test of one op's gradients (Softmax,
first and second order, through check_gradients) written with the typed
op_engine<ops::Softmax> and with op_engine("Softmax") by name (with the
registry's definition in the file, and with TENSORACLE_SEPARATE_REGISTRY, where
the project compiles it once elsewhere), each against the xtensor-only TU
(issue 14's target: typed <= 3x). With --oracle-steps, the typed test cut
off after each step (third-party headers, kit headers, the op's rules, the
engine, the check), which shows where its time goes.

With --typed-eval, the TUs are instead a file that evaluates one op (Softmax,
f32) through its typed spec: the typed kernel compute<float> from the op's
family header, and the checked path (constraints, shape inference, run) of
the op's entry built by spec::make_evaluation_entry<Op>(), each against the
xtensor-only TU (issue 15's target: <= 3x).

With --compiled, the TUs are the files a user of the compiled mode writes
(TENSORACLE_COMPILED defined, as linking tensoracle::compiled does): an empty
file including each layer's umbrella (issue 60's target: <= 1.5x), and three
tests (one op's gradients by name, a graph run through the interpreter, graphs
generated with their inputs searched: target <= 2x); --header-only-beside adds
the same three tests header-only, in the same interleaved runs.

With --library, the compiled mode's library (src/registry.cpp and the files generated per op
family) is compiled file by file beside the TENSORACLE_SEPARATE_REGISTRY object
it replaces (registry_definition.hpp in one file): the sum of its files (the
CPU a build spends) and its longest file (the build's critical path on
enough cores) against that object (target: less).

With --baseline-include DIR (e.g. the include/ of a `git worktree` at an
earlier commit), every kit TU is also compiled against DIR in the same
interleaved runs, so before and after come from one run."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

SOURCES = {
    "xtensor only": "#include <xtensor/xarray.hpp>\nint main() { xt::xarray<float> a = {1.f}; return static_cast<int>(a(0)) - 1; }\n",
    "tensoracle umbrella": "#include <tensoracle/core.hpp>\nint main() { tensoracle::array<float> a = {1.f}; return static_cast<int>(a(0)) - 1; }\n",
}

LAYERS = {"ops": "ops/registry.hpp", "graph": "graph/interpreter.hpp", "ad": "ad.hpp", "gen": "gen/input_search.hpp",
          "mutate": "mutate/mutate.hpp", "whole kit": "tensoracle.hpp"}
LAYER_SOURCES = {"xtensor only": SOURCES["xtensor only"]}
for _layer, _header in LAYERS.items():
    LAYER_SOURCES[_layer] = f"#include <tensoracle/{_header}>\nint main() {{ return 0; }}\n"
    LAYER_SOURCES[_layer + ", separate registry"] = (
        f"#define TENSORACLE_SEPARATE_REGISTRY\n#include <tensoracle/{_header}>\nint main() {{ return 0; }}\n")

ORACLE_TEST = """#include <tensoracle/ad/{header}>
{extra}
namespace to = tensoracle;
int main() {{
    to::rng g(42);
    const to::ad::tensors x{{g.uniform_tensor(to::dtype::f64, {{8, 8}}, -1.0, 1.0)}};
    to::ad::oracle_options o;
    o.order = 2;
    return to::ad::check_gradients(to::ad::op_engine{engine}, x, o).failed() ? 1 : 0;
}}
"""
ORACLE_SOURCES = {
    "xtensor only": SOURCES["xtensor only"],
    "oracle, typed op": ORACLE_TEST.format(header="typed_engine.hpp", extra="#include <tensoracle/ops/reduce.hpp>",
                                           engine="<to::ops::Softmax>()"),
    "oracle, op by name": ORACLE_TEST.format(header="engine.hpp", extra="", engine='("Softmax")'),
    # By name where the project compiles the registry once elsewhere (as the kit's tests do):
    # this file only declares it, and links against that object.
    "oracle, op by name, separate registry": ORACLE_TEST.format(
        header="engine.hpp", extra="", engine='("Softmax")').replace(
        "#include", "#define TENSORACLE_SEPARATE_REGISTRY\n#include", 1),
}

# --compiled: what a compiled-mode user's files cost (TENSORACLE_COMPILED).
_INTERPRETER_TEST = """#include <tensoracle/graph/interpreter.hpp>
namespace to = tensoracle;
int main() {
    to::graph::graph g;
    g.inputs = {{"x", to::dtype::f32, to::shape_type{2, 3}}};
    g.outputs = {{"y", to::dtype::f32, std::nullopt}};
    g.nodes = {{"Relu", {"x"}, {"h"}, {}, "relu", ""}, {"Softmax", {"h"}, {"y"}, {}, "softmax", ""}};
    to::rng r(1);
    const auto out = to::graph::run(g, {{"x", r.uniform_tensor(to::dtype::f32, {2, 3}, -1.0, 1.0)}});
    return out.outputs.size() == 1 ? 0 : 1;
}
"""
_GENERATOR_TEST = """#include <tensoracle/gen/generator.hpp>
#include <tensoracle/gen/input_search.hpp>
namespace to = tensoracle;
int main() {
    const to::gen::config cfg;
    const to::gen::generator gen(cfg);
    to::gen::generation_stats stats;
    auto g = to::gen::case_rng(11, 0, cfg.hash());
    const auto sketch = gen.generate(g, stats);
    return to::gen::search_inputs(sketch, g).success ? 0 : 1;
}
"""
_USER_TESTS = {"oracle, op by name": ORACLE_TEST.format(header="engine.hpp", extra="", engine='("Softmax")'),
               "interpreter, graph by name": _INTERPRETER_TEST, "generator and input search": _GENERATOR_TEST}
_COMPILED = "#define TENSORACLE_COMPILED\n"
COMPILED_SOURCES = {"xtensor only": SOURCES["xtensor only"]}
for _layer, _header in LAYERS.items():
    COMPILED_SOURCES[f"umbrella {_layer}, compiled"] = _COMPILED + f"#include <tensoracle/{_header}>\nint main() {{ return 0; }}\n"
for _name, _text in _USER_TESTS.items():
    COMPILED_SOURCES[_name + ", compiled"] = _COMPILED + _text
HEADER_ONLY_BESIDE = {name + ", header-only": text for name, text in _USER_TESTS.items()}


# --typed-eval: one op evaluated through its typed spec, without the registry.
_EVAL_INPUT = ("namespace to = tensoracle;\nint main() {\n"
               "    to::array<float> x = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};\n")
TYPED_EVAL_SOURCES = {
    "xtensor only": SOURCES["xtensor only"],
    "typed kernel, Softmax::compute<float>": "#include <tensoracle/ops/reduce.hpp>\n" + _EVAL_INPUT + (
        "    const auto y = to::ops::Softmax::compute<float>(x);\n    return y(0, 0) > 1.f ? 1 : 0;\n}\n"),
    "typed spec, checked evaluate": "#include <tensoracle/ops/reduce.hpp>\n#include <tensoracle/spec/entry.hpp>\n"
        + _EVAL_INPUT + (
        "    const to::tensor t(x);\n"
        "    const auto y = to::spec::evaluate(to::spec::make_evaluation_entry<to::ops::Softmax>(), {&t}, {});\n"
        "    return y.size() == 1 ? 0 : 1;\n}\n"),
}


# --oracle-steps: the typed one-op test cut off at each step, to show where its
# time goes: the third-party headers the kit includes, the kit's headers
# unused, the op's derivative rules in double and dual<double> (what any
# order-2 check of the op instantiates), the engine, and the whole check.
_TYPED_HEADERS = "#include <tensoracle/ad/typed_engine.hpp>\n#include <tensoracle/ops/reduce.hpp>\nnamespace to = tensoracle;\n"
ORACLE_STEP_SOURCES = {
    "xtensor only": SOURCES["xtensor only"],
    "1 third-party headers only": "".join(f"#include <{h}>\n" for h in (
        "algorithm", "bit", "cmath", "cstring", "iomanip", "memory", "optional", "ostream", "span", "string",
        "tuple", "utility", "variant", "vector", "boost/hana/adapt_struct.hpp", "boost/hana/for_each.hpp",
        "boost/hana/tuple.hpp", "boost/preprocessor/seq/enum.hpp", "boost/preprocessor/seq/transform.hpp",
        "boost/preprocessor/variadic/to_seq.hpp", "xtensor/xarray.hpp", "xtensor/xexpression.hpp")) + "int main() { return 0; }\n",
    "2 + the kit's headers, unused": _TYPED_HEADERS + "int main() { return 0; }\n",
    "3 + the op's rules in double, dual": _TYPED_HEADERS + (
        "int main() {\n    static const auto r = to::ad::make_rules<double, to::ops::Softmax>();\n"
        "    static const auto r2 = to::ad::make_rules<to::ad::dual<double>, to::ops::Softmax>();\n"
        "    return static_cast<int>(sizeof(r) + sizeof(r2)) == 0;\n}\n"),
    "4 + the engine": _TYPED_HEADERS + "int main() { return to::ad::op_engine<to::ops::Softmax>().value ? 0 : 1; }\n",
    "5 + check_gradients (the typed test)": ORACLE_SOURCES["oracle, typed op"],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("--include", default=os.path.join(os.path.dirname(__file__), "..", "include"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--flags", default="-std=c++20 -O0 -g0")
    ap.add_argument("--oracle", action="store_true", help="time a one-op gradient test, typed vs by name")
    ap.add_argument("--oracle-steps", action="store_true",
                    help="time the typed one-op gradient test cut off after each step (where its time goes)")
    ap.add_argument("--layers", action="store_true", help="time an empty TU including each layer's umbrella")
    ap.add_argument("--typed-eval", action="store_true", help="time a file evaluating one op through its typed spec")
    ap.add_argument("--compiled", action="store_true", help="time compiled-mode files (umbrellas and three user tests)")
    ap.add_argument("--header-only-beside", action="store_true", help="with --compiled: the user tests header-only too")
    ap.add_argument("--library", action="store_true",
                    help="time the compiled library's files against the separate-registry object they replace")
    ap.add_argument("--baseline-include", help="also compile each kit TU against this include directory (before/after)")
    args = ap.parse_args()
    if args.library:
        return library(args)
    sources = (dict(COMPILED_SOURCES, **(HEADER_ONLY_BESIDE if args.header_only_beside else {})) if args.compiled
               else ORACLE_STEP_SOURCES if args.oracle_steps else ORACLE_SOURCES if args.oracle
               else LAYER_SOURCES if args.layers else TYPED_EVAL_SOURCES if args.typed_eval else SOURCES)
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, text in sources.items():
            p = os.path.join(tmp, name.replace(" ", "_").replace(",", "") + ".cpp")
            with open(p, "w") as f:
                f.write(text)
            paths[name] = (p, args.include)
            if args.baseline_include and name != "xtensor only":
                paths[name + " (baseline)"] = (p, args.baseline_include)
        times = {name: [] for name in paths}
        for _ in range(args.runs):
            for name, (p, include) in paths.items():
                cmd = [args.cxx, *args.flags.split(), "-I", include, "-c", p, "-o", os.path.join(tmp, "out.o")]
                start = time.perf_counter()
                subprocess.run(cmd, check=True)
                times[name].append(time.perf_counter() - start)
    base = statistics.median(times["xtensor only"])
    print(f"compiler: {args.cxx} {args.flags}; {args.runs} interleaved runs each")
    for name, ts in times.items():
        print(f"  {name:34s} median {statistics.median(ts):6.3f} s  (min {min(ts):.3f}, max {max(ts):.3f})")
    # Each mode's files against the xtensor-only one, with the target where it sets one.
    def target(name):
        if args.oracle_steps:
            return None
        if args.oracle:
            return 3.0 if "typed" in name else None
        if args.compiled:
            return None if "header-only" in name else 1.5 if name.startswith("umbrella") else 2.0
        return 3.0 if args.typed_eval else 2.0 if args.layers else 1.5
    for name in times:
        if name == "xtensor only" or (args.oracle and not name.startswith("oracle")):
            continue
        goal = target(name)
        print(f"compile-time ratio {name} / xtensor-only: {statistics.median(times[name]) / base:.2f}x"
              + (f" (target <= {goal:.2f}x)" if goal is not None else ""))
    return 0


def _library_family_files(src, out):
    """The library's per-family files, generated into `out` from src/'s templates as src/CMakeLists.txt does."""
    with open(os.path.join(src, "CMakeLists.txt")) as f:
        families = re.search(r"set\(tensoracle_op_families ([^)]*)\)", f.read()).group(1).split()
    def generate(template, name, family=None, calls=None):
        with open(os.path.join(src, template)) as f:
            text = f.read()
        text = text.replace("@family@", family or "").replace("@family_calls@", calls or "")
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
        return os.path.join(out, name)
    generate("family_list.hpp.in", "family_list.hpp", calls="".join(f" X({fam})" for fam in families))
    return [generate(t, n.format(fam), fam) for fam in families
            for t, n in (("family.cpp.in", "family_{}.cpp"), ("family_dual.cpp.in", "family_{}_dual.cpp"))]


def library(args):
    """The library's files one by one against the separate-registry object, interleaved."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    with tempfile.TemporaryDirectory() as tmp:
        files = [os.path.join(src, "registry.cpp"), *_library_family_files(src, tmp)]
        separate = os.path.join(tmp, "registry_definition.cpp")
        with open(separate, "w") as f:
            f.write("#include <tensoracle/registry_definition.hpp>\n")
        jobs = [("separate-registry object", separate, ["-DTENSORACLE_SEPARATE_REGISTRY"])]
        jobs += [(os.path.basename(p), p, ["-DTENSORACLE_COMPILED"]) for p in files]
        times = {name: [] for name, _, _ in jobs}
        for _ in range(args.runs):
            for name, path, defs in jobs:
                cmd = [args.cxx, *args.flags.split(), *defs, "-I", args.include, "-I", src, "-I", tmp, "-c", path, "-o",
                       os.path.join(tmp, "out.o")]
                start = time.perf_counter()
                subprocess.run(cmd, check=True)
                times[name].append(time.perf_counter() - start)
    print(f"compiler: {args.cxx} {args.flags}; {args.runs} interleaved runs each")
    med = {name: statistics.median(ts) for name, ts in times.items()}
    for name, m in med.items():
        print(f"  {name:28s} median {m:7.1f} s")
    obj = med.pop("separate-registry object")
    print(f"library / separate-registry object: CPU (sum of files) {sum(med.values()) / obj:.2f}x, "
          f"critical path (longest file) {max(med.values()) / obj:.2f}x (target < 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
