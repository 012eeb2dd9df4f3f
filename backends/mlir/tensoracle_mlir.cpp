// tensoracle-mlir: MLIR 15 (TOSA -> Linalg -> loops -> LLVM, JIT-compiled) as a campaign
// backend, in two pipeline configurations.
//
//   tensoracle-mlir [--pipeline O0|opt] MODEL INPUT_DIR OUTPUT_DIR   one case (docs/BACKENDS.md's exit codes)
//   tensoracle-mlir [--pipeline O0|opt] --worker                     cases on stdin, one JSON reply line each
//   tensoracle-mlir [--pipeline O0|opt] --emit DIR MODEL INPUT_DIR   a standalone reproducer in DIR (run.sh)
//   tensoracle-mlir --bisect MODEL INPUT_DIR                         which opt passes make the outputs differ
//   tensoracle-mlir --probe                                          prints what it runs, exits 0
//   tensoracle-mlir --list-ops                                       the ONNX ops it lowers, one a line
//
// Each case: the kit's ONNX loader reads the model, backends/mlir/tosa_lowering.hpp writes
// it as a TOSA module specialized to the inputs' shapes, `mlir-opt-15` runs the pipeline
// down to the LLVM dialect, and `mlir-cpu-runner-15` JIT-compiles and runs @main, which
// moves exact bytes through backends/mlir/mlir_io.c. The two configurations (the passes
// are in pipeline_passes() and docs/BACKENDS.md):
//   O0:  the minimal lowering, no fusion, LLVM at -O0;
//   opt: canonicalization and CSE between stages, linalg element-wise fusion, affine
//        loop fusion, scalar replacement and invariant code motion, LLVM at -O3.
// A disagreement between them is the compiler's (the lowering is the same text).
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <utility>
#include <sstream>
#include <string>
#include <vector>

#include "tensoracle/campaign/backend.hpp"
#include "tensoracle/campaign/process.hpp"
#include "tensoracle/io/onnx.hpp"
#include "tensoracle/version.hpp"
#include "tosa_lowering.hpp"

namespace {

namespace to = tensoracle;
namespace tm = tensoracle::backends::mlir_tosa;
namespace fs = std::filesystem;

enum class pipeline { O0, opt };

struct outcome {
    int code = 0;          // 0 ran, 3 unsupported or did not compile, 1 failed while running
    std::string status;    // the worker's reply word
    std::string message;
};

std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

std::string opt_tool() { return env_or("TENSORACLE_MLIR_OPT", "mlir-opt-15"); }
std::string runner_tool() { return env_or("TENSORACLE_MLIR_RUNNER", "mlir-cpu-runner-15"); }

/// MLIR's runner utilities and the kit's data path, for -shared-libs.
std::string shared_libs() {
    const std::string llvm = env_or("TENSORACLE_MLIR_LIBDIR", "/usr/lib/llvm-15/lib");
    fs::path io = env_or("TENSORACLE_MLIR_IO_LIB", "");
    if (io.empty()) {
        std::error_code ec;
        const auto self = fs::read_symlink("/proc/self/exe", ec);
        for (const auto& c : {self.parent_path() / "libtensoracle_mlir_io.so", self.parent_path().parent_path() / "lib" / "tensoracle" / "libtensoracle_mlir_io.so"}) {
            if (fs::exists(c)) {
                io = c;
                break;
            }
        }
    }
    if (io.empty()) throw to::error("tensoracle-mlir", "libtensoracle_mlir_io.so is not next to tensoracle-mlir; set TENSORACLE_MLIR_IO_LIB");
    return llvm + "/libmlir_runner_utils.so," + llvm + "/libmlir_c_runner_utils.so," + io.string();
}

/// One pass of a pipeline: where it is anchored (func.func or the module) and whether the
/// minimal (O0) lowering needs it to reach the LLVM dialect.
struct pass_step {
    bool on_functions;
    std::string name;
    bool required;
};

/// The passes of a configuration, in order.
std::vector<pass_step> pipeline_steps(pipeline p) {
    const std::string bufferize = "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs function-boundary-type-conversion=identity-layout-map}";
    const bool opt = p == pipeline::opt;
    std::vector<pass_step> s;
    auto add = [&](bool f, const std::string& n, bool required = true) {
        if (required || opt) s.push_back({f, n, required});
    };
    add(true, "tosa-optional-decompositions");
    add(false, "canonicalize", false);
    add(true, "tosa-to-linalg-named");
    add(true, "tosa-to-linalg");
    add(false, "tosa-to-arith");
    add(false, "tosa-to-tensor");
    add(false, "canonicalize");
    add(false, "cse", false);
    add(false, "linalg-fuse-elementwise-ops", false);
    add(false, "canonicalize", false);
    add(false, "cse", false);
    add(false, "convert-tensor-to-linalg");
    add(false, "linalg-init-tensor-to-alloc-tensor");
    add(false, bufferize);
    add(true, "buffer-hoisting", false);
    add(true, "convert-linalg-to-affine-loops");
    add(true, "affine-loop-fusion", false);
    add(true, "affine-scalrep", false);
    add(true, "affine-loop-invariant-code-motion", false);
    add(false, "lower-affine");
    add(false, "convert-scf-to-cf");
    add(false, "canonicalize", false);
    add(false, "cse", false);
    for (const char* n : {"arith-expand", "memref-expand", "convert-memref-to-llvm", "convert-math-to-llvm", "convert-math-to-libm", "convert-arith-to-llvm",
                          "convert-func-to-llvm", "convert-cf-to-llvm", "reconcile-unrealized-casts"}) {
        add(false, n);
    }
    return s;
}

/// mlir-opt 15's --pass-pipeline text of `steps` (consecutive function passes nested together).
std::string pipeline_text(const std::vector<pass_step>& steps) {
    std::string t;
    for (std::size_t i = 0; i < steps.size();) {
        if (!t.empty()) t += ",";
        if (!steps[i].on_functions) {
            t += steps[i++].name;
            continue;
        }
        t += "func.func(";
        for (bool first = true; i < steps.size() && steps[i].on_functions; ++i, first = false) t += (first ? "" : ",") + steps[i].name;
        t += ")";
    }
    return t;
}

std::string pipeline_passes(pipeline p) { return pipeline_text(pipeline_steps(p)); }

std::string first_error(const std::string& err) {
    std::istringstream is(err);
    std::string line, first;
    while (std::getline(is, line)) {
        if (first.empty() && !line.empty()) first = line;
        if (line.find("error:") != std::string::npos) return line;
    }
    return first;
}

int count_of(const std::string& text, const std::string& what) {
    int n = 0;
    for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
    return n;
}

/// The sections of mlir-opt's IR printing that follow `header` (one per function for a
/// function pass), joined.
std::string dump_sections(const std::string& err, const std::string& header) {
    std::string out;
    for (auto p = err.find(header); p != std::string::npos; p = err.find(header, p + header.size())) {
        const auto q = err.find("// -----// IR Dump", p + header.size());
        out += err.substr(p, q == std::string::npos ? std::string::npos : q - p);
    }
    return out;
}

/// Rewrite feedback (docs/BACKENDS.md): the linalg.generic ops element-wise fusion merged
/// and the loop nests affine loop fusion merged, read from mlir-opt's IR printing.
nlohmann::json mlir_rewrites(const std::string& err) {
    nlohmann::json events = nlohmann::json::array();
    const auto before = dump_sections(err, "IR Dump Before LinalgElementwiseOpFusion");
    const auto after = dump_sections(err, "IR Dump After LinalgElementwiseOpFusion");
    const int gb = count_of(before, "linalg.generic"), ga = count_of(after, "linalg.generic");
    if (!before.empty() && !after.empty() && ga < gb) {
        events.push_back({{"kind", "linalg elementwise fusion"}, {"class", "fusion"}});
    }
    const auto lb = dump_sections(err, "IR Dump Before AffineLoopFusion"), la = dump_sections(err, "IR Dump After AffineLoopFusion");
    const int fb = count_of(lb, "affine.for"), fa = count_of(la, "affine.for");
    if (!lb.empty() && !la.empty() && fa < fb) {
        events.push_back({{"kind", "affine loop fusion"}, {"class", "fusion"}});
    }
    return {{"events", events}};
}

/// A per-process scratch folder for one case's module and data.
fs::path scratch() {
    static const fs::path dir = [] {
        auto d = fs::temp_directory_path() / ("tensoracle-mlir-" + std::to_string(::getpid()));
        fs::create_directories(d);
        return d;
    }();
    return dir;
}

struct lowered {
    to::graph::graph g;
    std::string module;
    std::vector<tm::vtype> outputs;
    std::vector<to::tensor> inputs;
};

/// Reads and lowers a case; throws unsupported_error or error.
lowered lower_case(const fs::path& model, const fs::path& inputs) {
    lowered l;
    if (!fs::is_regular_file(model)) throw to::error("tensoracle-mlir", "no model file " + model.string());
    try {
        l.g = to::io::load_model(model);
        l.g.validate();
    } catch (const std::exception& e) {
        // The kit's loader is this backend's front end: what it cannot represent never reaches MLIR.
        throw to::unsupported_error("tensoracle-mlir", std::string("the kit's ONNX loader refuses the model: ") + e.what());
    }
    std::vector<tm::vtype> types;
    for (std::size_t k = 0; k < l.g.inputs.size(); ++k) {
        l.inputs.push_back(to::io::load_tensor(inputs / ("input_" + std::to_string(k) + ".pb")));
        types.push_back({l.inputs.back().element_dtype(), l.inputs.back().shape()});
    }
    tm::lowering low(l.g, types);
    std::map<std::string, to::tensor, std::less<>> values;
    for (std::size_t k = 0; k < l.g.inputs.size(); ++k) values.emplace(l.g.inputs[k].name, l.inputs[k]);
    low.specialize_inputs(std::move(values));
    l.module = low.module_text();
    l.outputs = low.output_types();
    return l;
}

void write_inputs(const lowered& l, const fs::path& dir) {
    for (std::size_t k = 0; k < l.inputs.size(); ++k) {
        const auto bytes = l.inputs[k].to_bytes();
        std::ofstream f(dir / ("input_" + std::to_string(k) + ".bin"), std::ios::binary);
        f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        if (!f) throw to::error("tensoracle-mlir", "cannot write " + (dir / ("input_" + std::to_string(k) + ".bin")).string());
    }
}

std::vector<std::string> opt_command(pipeline p, const fs::path& in, const fs::path& out) {
    return {opt_tool(), "--pass-pipeline=" + pipeline_passes(p), in.string(), "-o", out.string()};
}
std::vector<std::string> runner_command(pipeline p, const fs::path& in) {
    return {runner_tool(), in.string(), "-e", "main", "-entry-point-result=void", p == pipeline::O0 ? "-O0" : "-O3", "-shared-libs=" + shared_libs()};
}

std::string shell_quote(const std::string& s) {
    if (s.find_first_of(" \t'\"{}(),=*$\\") == std::string::npos) return s;
    std::string q = "'";
    for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

outcome serve(const to::campaign::case_paths& c, pipeline p) {
    lowered l;
    try {
        l = lower_case(c.model, c.inputs);
    } catch (const to::unsupported_error& e) {
        return {3, "unsupported", std::string("unsupported: ") + e.what()};
    } catch (const std::exception& e) {
        return {3, "compile_failure", e.what()};
    }
    const auto dir = scratch();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) fs::remove_all(entry.path(), ec);
    const auto module = dir / "module.mlir", llvm = dir / "module.llvm.mlir";
    try {
        std::ofstream(module) << l.module;
        write_inputs(l, dir);
    } catch (const std::exception& e) {
        return {1, "runtime_error", e.what()};
    }
    auto opt = opt_command(p, module, llvm);
    if (p == pipeline::opt) {
        // Rewrite feedback: the IR around the two fusion passes (printed to stderr).
        opt.insert(opt.begin() + 1, {"--mlir-print-ir-before=linalg-fuse-elementwise-ops", "--mlir-print-ir-after=linalg-fuse-elementwise-ops",
                                     "--mlir-print-ir-before=affine-loop-fusion", "--mlir-print-ir-after=affine-loop-fusion"});
    }
    auto po = to::campaign::process_options::with_timeout(120);
    po.capture_limit = std::size_t{64} << 20;
    const auto compiled = to::campaign::run_process(opt, po);
    if (compiled.kind == to::campaign::exit_kind::not_started) return {3, "compile_failure", "cannot run " + opt[0] + ": " + compiled.error_message};
    if (compiled.kind == to::campaign::exit_kind::signalled) {
        return {3, "compile_failure", "mlir-opt crashed (signal " + std::to_string(compiled.signal) + "): " + first_error(compiled.err)};
    }
    if (compiled.kind != to::campaign::exit_kind::exited || compiled.exit_code != 0) {
        return {3, "compile_failure", "mlir-opt: " + first_error(compiled.err)};
    }
    if (p == pipeline::opt) std::ofstream(c.outputs / "rewrites.json") << mlir_rewrites(compiled.err).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    ::setenv("TENSORACLE_MLIR_IO", dir.c_str(), 1);
    std::vector<std::string> run;
    try {
        run = runner_command(p, llvm);
    } catch (const std::exception& e) {
        return {1, "runtime_error", e.what()};
    }
    const auto ran = to::campaign::run_process(run, to::campaign::process_options::with_timeout(120));
    if (ran.kind == to::campaign::exit_kind::signalled) {
        return {1, "runtime_error", "mlir-cpu-runner killed by signal " + std::to_string(ran.signal) + ": " + first_error(ran.err)};
    }
    if (ran.kind != to::campaign::exit_kind::exited || ran.exit_code != 0) {
        const auto m = first_error(ran.err);
        // The JIT translates and verifies before @main runs: its errors are compile failures.
        if (m.find("tensoracle-mlir-io") == std::string::npos && m.find("rror") != std::string::npos) return {3, "compile_failure", "mlir-cpu-runner: " + m};
        return {1, "runtime_error", "mlir-cpu-runner: " + (m.empty() ? "exit " + std::to_string(ran.exit_code) : m)};
    }
    try {
        for (std::size_t k = 0; k < l.outputs.size(); ++k) {
            const auto path = dir / ("output_" + std::to_string(k) + ".bin");
            std::ifstream f(path, std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            const auto& t = l.outputs[k];
            const auto expect = static_cast<std::size_t>(t.elements()) * (t.d == to::dtype::boolean ? std::size_t{1} : static_cast<std::size_t>(to::info(t.d).bits / 8));
            if (bytes.size() != expect) {
                throw to::error("tensoracle-mlir", path.string() + " holds " + std::to_string(bytes.size()) + " bytes, output " + std::to_string(k) + " needs " + std::to_string(expect));
            }
            const auto out = to::tensor::from_bytes(t.d, t.s, std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()));
            to::io::save_tensor(out, c.outputs / ("output_" + std::to_string(k) + ".pb"), l.g.outputs[k].name);
        }
    } catch (const std::exception& e) {
        return {1, "runtime_error", e.what()};
    }
    return {0, "ok", ""};
}

/// A reproducer an MLIR developer reruns without the kit: the module, the data files,
/// the I/O library's source and the exact command lines.
int emit(const fs::path& dir, const fs::path& model, const fs::path& inputs, pipeline p) {
    const auto l = lower_case(model, inputs);
    fs::create_directories(dir);
    std::ofstream(dir / "module.mlir") << l.module;
    write_inputs(l, dir);
    std::ostringstream sh;
    sh << "#!/bin/sh\n# tensoracle-mlir reproducer (" << (p == pipeline::O0 ? "O0" : "opt") << " pipeline): output_k.bin are the raw outputs\nset -e\ncd \"$(dirname \"$0\")\"\n";
    for (const auto* cmd : {"opt", "run"}) {
        const auto argv = std::string(cmd) == "opt" ? opt_command(p, "module.mlir", "module.llvm.mlir") : runner_command(p, "module.llvm.mlir");
        if (std::string(cmd) == "run") sh << "TENSORACLE_MLIR_IO=. ";
        for (std::size_t i = 0; i < argv.size(); ++i) sh << (i ? " " : "") << shell_quote(argv[i]);
        sh << "\n";
    }
    std::ofstream(dir / "run.sh") << sh.str();
    fs::permissions(dir / "run.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec, fs::perm_options::add);
    std::ofstream types(dir / "outputs.txt");
    for (std::size_t k = 0; k < l.outputs.size(); ++k) types << "output_" << k << ".bin: " << tm::tensor_type(l.outputs[k], "emit") << "\n";
    std::printf("%s\n", (dir / "run.sh").c_str());
    return 0;
}

/// The raw output bytes of the module in `dir` through `steps` (LLVM at -O0), or the
/// reason it did not compile or run.
std::pair<std::optional<std::string>, std::string> run_steps(const std::vector<pass_step>& steps, const fs::path& dir, std::size_t outputs) {
    const auto module = dir / "module.mlir", llvm = dir / "bisect.llvm.mlir";
    auto po = to::campaign::process_options::with_timeout(120);
    const auto c = to::campaign::run_process({opt_tool(), "--pass-pipeline=" + pipeline_text(steps), module.string(), "-o", llvm.string()}, po);
    if (c.kind != to::campaign::exit_kind::exited || c.exit_code != 0) return {std::nullopt, "mlir-opt: " + first_error(c.err)};
    ::setenv("TENSORACLE_MLIR_IO", dir.c_str(), 1);
    auto cmd = runner_command(pipeline::O0, llvm);
    const auto r = to::campaign::run_process(cmd, po);
    if (r.kind != to::campaign::exit_kind::exited || r.exit_code != 0) return {std::nullopt, "mlir-cpu-runner: " + first_error(r.err)};
    std::string bytes;
    for (std::size_t k = 0; k < outputs; ++k) {
        std::ifstream f(dir / ("output_" + std::to_string(k) + ".bin"), std::ios::binary);
        bytes += std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    }
    return {bytes, ""};
}

/// Which optional passes of the opt pipeline make its outputs differ from the minimal
/// lowering's: drops them one at a time while the difference stays (LLVM at -O0 for
/// both, so only MLIR's passes vary). Prints the passes left and the pipeline.
int bisect(const fs::path& model, const fs::path& inputs) {
    const auto l = lower_case(model, inputs);
    const auto dir = scratch();
    std::ofstream(dir / "module.mlir") << l.module;
    write_inputs(l, dir);
    std::vector<pass_step> minimal;
    for (const auto& st : pipeline_steps(pipeline::opt)) {
        if (st.required) minimal.push_back(st);
    }
    const auto [base, base_err] = run_steps(minimal, dir, l.outputs.size());
    if (!base) {
        std::printf("the minimal pipeline fails: %s\n", base_err.c_str());
        return 1;
    }
    auto cur = pipeline_steps(pipeline::opt);
    const auto [full, full_err] = run_steps(cur, dir, l.outputs.size());
    if (!full) {
        std::printf("the opt pipeline fails (%s): compare with --pipeline O0 directly\n", full_err.c_str());
        return 1;
    }
    if (*full == *base) {
        std::printf("with LLVM at -O0 both pipelines give the same outputs: the difference is LLVM's -O3, not an MLIR pass\n");
        return 0;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (std::size_t i = 0; i < cur.size(); ++i) {
            if (cur[i].required) continue;
            auto t = cur;
            t.erase(t.begin() + static_cast<std::ptrdiff_t>(i));
            const auto [o, e] = run_steps(t, dir, l.outputs.size());
            if (o && *o != *base) {
                cur = std::move(t);
                changed = true;
                break;
            }
        }
    }
    std::string needed;
    for (const auto& st : cur) {
        if (!st.required) needed += (needed.empty() ? "" : ", ") + st.name;
    }
    std::printf("passes that make the difference: %s\npipeline: %s\n", needed.c_str(), pipeline_text(cur).c_str());
    return 0;
}

int usage() {
    std::fputs("usage: tensoracle-mlir [--pipeline O0|opt] (MODEL INPUT_DIR OUTPUT_DIR | --worker | --emit DIR MODEL INPUT_DIR | --probe)\n"
               "       tensoracle-mlir --bisect MODEL INPUT_DIR   (which opt passes make it differ from O0)\n"
               "       tensoracle-mlir --list-ops                 (the ONNX ops the lowering covers)\n", stderr);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    pipeline p = pipeline::opt;
    bool worker = false, probe = false, bisect_passes = false;
    std::string emit_dir;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--pipeline" && i + 1 < argc) {
            const std::string m = argv[++i];
            if (m == "O0") {
                p = pipeline::O0;
            } else if (m == "opt") {
                p = pipeline::opt;
            } else {
                std::fprintf(stderr, "tensoracle-mlir: --pipeline takes O0 or opt, not '%s'\n", m.c_str());
                return 2;
            }
        } else if (a == "--worker") {
            worker = true;
        } else if (a == "--probe") {
            probe = true;
        } else if (a == "--bisect") {
            bisect_passes = true;
        } else if (a == "--list-ops") {
            // For configs and sweeps restricted to what the lowering covers (scripts/mlir-sweep).
            for (const auto& op : tensoracle::backends::mlir_tosa::lowered_op_types()) std::printf("%s\n", op.c_str());
            return 0;
        } else if (a == "--emit" && i + 1 < argc) {
            emit_dir = argv[++i];
        } else if (a.rfind("--", 0) == 0) {
            std::fprintf(stderr, "tensoracle-mlir: unknown option '%s'\n", a.c_str());
            return usage();
        } else {
            paths.push_back(a);
        }
    }
    try {
        if (probe) {
            // Both tools must run, and the libraries exist: else the backend is skipped.
            const auto v = to::campaign::run_process({opt_tool(), "--version"}, to::campaign::process_options::with_timeout(30));
            if (v.kind != to::campaign::exit_kind::exited || v.exit_code != 0) {
                std::fprintf(stderr, "%s does not run (%s); install mlir-15-tools: scripts/setup\n", opt_tool().c_str(),
                             v.kind == to::campaign::exit_kind::not_started ? v.error_message.c_str() : "exit status");
                return 1;
            }
            const auto r = to::campaign::run_process({runner_tool(), "--version"}, to::campaign::process_options::with_timeout(30));
            if (r.kind != to::campaign::exit_kind::exited || r.exit_code != 0) {
                std::fprintf(stderr, "%s does not run; install mlir-15-tools: scripts/setup\n", runner_tool().c_str());
                return 1;
            }
            const auto libs = shared_libs();
            std::istringstream ls(libs);
            for (std::string lib; std::getline(ls, lib, ',');) {
                if (!fs::exists(lib)) {
                    std::fprintf(stderr, "%s is missing; install libmlir-15-dev: scripts/setup\n", lib.c_str());
                    return 1;
                }
            }
            std::string version = "MLIR";
            std::istringstream vs(v.out);
            for (std::string line; std::getline(vs, line);) {
                if (line.find("version") != std::string::npos) {
                    version = "MLIR " + line.substr(line.find("version") + 8);
                    break;
                }
            }
            std::printf("%s (tensoracle-mlir %s, %s pipeline)\n", version.c_str(), tensoracle::version_string, p == pipeline::O0 ? "O0" : "opt");
            return 0;
        }
        if (bisect_passes) {
            if (paths.size() != 2) return usage();
            const int rc = bisect(paths[0], paths[1]);
            std::error_code ec;
            fs::remove_all(scratch(), ec);
            return rc;
        }
        if (!emit_dir.empty()) {
            if (paths.size() != 2) return usage();
            return emit(emit_dir, paths[0], paths[1], p);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return dynamic_cast<const to::unsupported_error*>(&e) ? 3 : 1;
    }
    if (worker) {
        to::campaign::serve_worker_requests(std::cin, std::cout, [&](const to::campaign::case_paths& c) {
            const auto r = serve(c, p);
            return std::pair{r.status, r.message};
        });
        std::error_code ec;
        fs::remove_all(scratch(), ec);
        return 0;
    }
    if (paths.size() != 3) return usage();
    const auto r = serve({paths[0], paths[1], paths[2], 0}, p);
    std::error_code ec;
    fs::remove_all(scratch(), ec);
    if (!r.message.empty()) std::fprintf(stderr, "%s\n", r.message.c_str());
    return r.code;
}
