// tensoracle-torch: PyTorch (libtorch 1.13) as a campaign backend, in two configurations.
//
//   tensoracle-torch [--mode eager|script] MODEL INPUT_DIR OUTPUT_DIR   one case (docs/BACKENDS.md's exit codes)
//   tensoracle-torch [--mode eager|script] --worker                     cases on stdin, one JSON reply line each
//   tensoracle-torch --probe                                            prints what it runs, exits 0
//
// eager:  every ONNX node one ATen call (backends/torch/torch_ops.hpp), as a torch user's code.
// script: the same program traced into a TorchScript graph (torch.jit.trace), put into a module,
//         frozen (torch.jit.freeze: constants folded, Conv-BN/Add/Mul folded into the convolution)
//         and optimized for inference (optimize_for_inference: MKL-DNN conversions where
//         Debian's build has them), then run through the profiling graph executor three times,
//         so that its optimized plan (and, with --fuse, NNC fusion groups) computes the answer.
// Eager vs script is a differential pair: the campaign compares them with each other.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/api/include/torch/version.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <iostream>
#include <string>
#include <vector>

#include "tensoracle/campaign/backend.hpp"
#include "tensoracle/io/onnx.hpp"
#include "tensoracle/version.hpp"
#include "torch_ops.hpp"

namespace torch::jit {
TORCH_API void overrideCanFuseOnCPU(bool value);  // in libtorch_cpu, not in Debian's installed headers
}

namespace {

namespace to = tensoracle;
namespace tb = tensoracle::backends::torch_onnx;
namespace fs = std::filesystem;

enum class mode { eager, script };

struct outcome {
    int code = 0;          // 0 ran, 3 unsupported or did not compile, 1 failed while running
    std::string status;    // the worker's reply word
    std::string message;
};

outcome refused(const std::exception& e, bool compiling) {
    if (dynamic_cast<const to::unsupported_error*>(&e)) return {3, "unsupported", std::string("unsupported: ") + e.what()};
    if (const auto* c = dynamic_cast<const c10::Error*>(&e)) {
        const std::string m = tb::detail_first_line(c->what_without_backtrace());
        if (m.find("not implemented for") != std::string::npos) return {3, "unsupported", "unsupported: " + m};
        return compiling ? outcome{3, "compile_failure", m} : outcome{1, "runtime_error", m};
    }
    return compiling ? outcome{3, "compile_failure", e.what()} : outcome{1, "runtime_error", e.what()};
}

/// The node kinds of a TorchScript graph that compute (constants and list and tuple
/// plumbing left out), counted.
std::map<std::string, int> computing_kinds(const torch::jit::Graph& graph) {
    std::map<std::string, int> kinds;
    for (const auto* n : graph.nodes()) {
        const std::string k = n->kind().toQualString();
        if (k.rfind("prim::", 0) == 0 && k != "prim::FusionGroup" && k != "prim::TensorExprGroup" && k != "prim::mkldnn_convolution") continue;
        ++kinds[k];
    }
    return kinds;
}

/// Rewrite feedback (docs/BACKENDS.md): what freezing and optimize_for_inference
/// changed in the traced graph, as the kinds that vanished and appeared, one event.
nlohmann::json script_rewrites(const std::map<std::string, int>& traced, const std::map<std::string, int>& optimized) {
    std::string gone, came;
    for (const auto& [k, n] : traced) {
        const auto it = optimized.find(k);
        for (int i = it == optimized.end() ? 0 : it->second; i < n; ++i) gone += (gone.empty() ? "" : "+") + k;
    }
    for (const auto& [k, n] : optimized) {
        const auto it = traced.find(k);
        for (int i = it == traced.end() ? 0 : it->second; i < n; ++i) came += (came.empty() ? "" : "+") + k;
    }
    nlohmann::json events = nlohmann::json::array();
    if (!gone.empty() || !came.empty()) {
        const char* what = gone.empty() ? "insertion" : came.empty() ? "elimination" : "fusion";
        events.push_back({{"kind", (gone.empty() ? std::string() : gone + " -> ") + (came.empty() ? std::string("(removed)") : came)}, {"class", what}});
    }
    return {{"events", events}};
}

/// The eager program traced, frozen and optimized: TorchScript's inference path.
/// `traced_kinds`: the traced graph's computing node kinds, before the passes.
torch::jit::Module script_module(const to::graph::graph& g, const std::map<std::string, at::Tensor, std::less<>>& inits, const tb::tensors& inputs,
                                 std::map<std::string, int>& traced_kinds) {
    torch::jit::Module m("tensoracle_graph");
    m.register_attribute("training", c10::BoolType::get(), false);
    torch::jit::Stack stack(inputs.begin(), inputs.end());
    auto traced = torch::jit::tracer::trace(
        stack,
        [&](torch::jit::Stack in) {
            tb::tensors t;
            for (auto& v : in) t.push_back(v.toTensor());
            const auto out = tb::run_eager(g, inits, t);
            std::vector<c10::IValue> values;
            for (const auto& o : out) {
                // An output computed from no input (a Shape, a Constant) is no traced value: the
                // tracer refuses it. Copied while tracing, it is a constant the graph returns.
                values.emplace_back(torch::jit::tracer::getTracingState()->hasValue(o) ? o : o.clone());
            }
            return torch::jit::Stack{c10::ivalue::Tuple::create(std::move(values))};
        },
        [](const at::Tensor&) { return std::string(); }, /*strict=*/false, /*force_outplace=*/false, &m);
    auto graph = traced.first->graph;
    traced_kinds = computing_kinds(*graph);
    auto fn = m._ivalue()->compilation_unit()->create_function(c10::QualifiedName(*m.type()->name(), "forward"), graph);
    m.type()->addMethod(fn);
    m.eval();
    return torch::jit::optimize_for_inference(m);
}

bool dump_graph = false;  // --dump-graph: the executor's optimized graph to stderr

outcome serve(const to::campaign::case_paths& c, mode md) {
    to::graph::graph g;
    std::map<std::string, at::Tensor, std::less<>> inits;
    tb::tensors inputs;
    try {
        if (!fs::is_regular_file(c.model)) throw to::error("tensoracle-torch", "no model file " + c.model.string());
        try {
            g = to::io::load_model(c.model);
            g.validate();
        } catch (const std::exception& e) {
            // The kit's own loader is this backend's front end: what it cannot represent
            // (an old opset's form, an element type) never reaches PyTorch.
            throw to::unsupported_error("tensoracle-torch", std::string("the kit's ONNX loader refuses the model: ") + e.what());
        }
        for (const auto& n : g.nodes) (void)tb::mapping_of(n);
        for (const auto& [name, t] : g.initializers) inits.emplace(name, tb::to_torch(t));
        for (std::size_t k = 0; k < g.inputs.size(); ++k) {
            inputs.push_back(tb::to_torch(to::io::load_tensor(c.inputs / ("input_" + std::to_string(k) + ".pb"))));
        }
    } catch (const std::exception& e) {
        return refused(e, true);
    }
    tb::tensors outputs;
    if (md == mode::eager) {
        try {
            outputs = tb::run_eager(g, inits, inputs);
        } catch (const std::exception& e) {
            return refused(e, false);
        }
    } else {
        torch::jit::Module m;
        std::map<std::string, int> traced_kinds;
        try {
            m = script_module(g, inits, inputs, traced_kinds);
            std::ofstream(c.outputs / "rewrites.json") << script_rewrites(traced_kinds, computing_kinds(*m.get_method("forward").graph())).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        } catch (const to::unsupported_error& e) {
            return refused(e, true);
        } catch (const to::error& e) {
            return refused(e, false);  // the eager program failed while tracing: not the compiler's refusal
        } catch (const std::exception& e) {
            return refused(e, true);
        }
        try {
            c10::IValue result;
            std::vector<c10::IValue> args(inputs.begin(), inputs.end());
            for (int run = 0; run < 3; ++run) result = m.forward(args);  // profile, then optimized runs
            if (dump_graph) std::cerr << *torch::jit::lastExecutedOptimizedGraph() << std::endl;
            for (const auto& v : result.toTuple()->elements()) outputs.push_back(v.toTensor());
        } catch (const std::exception& e) {
            return refused(e, false);
        }
    }
    try {
        if (outputs.size() != g.outputs.size()) throw to::error("tensoracle-torch", "the program returned " + std::to_string(outputs.size()) + " outputs");
        for (std::size_t k = 0; k < outputs.size(); ++k) {
            to::io::save_tensor(tb::from_torch(outputs[k], "tensoracle-torch"), c.outputs / ("output_" + std::to_string(k) + ".pb"), g.outputs[k].name);
        }
    } catch (const std::exception& e) {
        return refused(e, false);
    }
    return {0, "ok", ""};
}

int usage() {
    std::fputs("usage: tensoracle-torch [--mode eager|script] [--fuse] [--dump-graph] (MODEL INPUT_DIR OUTPUT_DIR | --worker | --probe)\n", stderr);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    mode md = mode::eager;
    bool worker = false, probe = false, fuse = false;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--mode" && i + 1 < argc) {
            const std::string m = argv[++i];
            if (m == "eager") {
                md = mode::eager;
            } else if (m == "script") {
                md = mode::script;
            } else {
                std::fprintf(stderr, "tensoracle-torch: --mode takes eager or script, not '%s'\n", m.c_str());
                return 2;
            }
        } else if (a == "--worker") {
            worker = true;
        } else if (a == "--probe") {
            probe = true;
        } else if (a == "--dump-graph") {
            dump_graph = true;
        } else if (a == "--fuse") {
            fuse = true;
        } else if (a.rfind("--", 0) == 0) {
            std::fprintf(stderr, "tensoracle-torch: unknown option '%s'\n", a.c_str());
            return usage();
        } else {
            paths.push_back(a);
        }
    }
    // One thread: a campaign runs one backend process per core.
    at::set_num_threads(1);
    at::set_num_interop_threads(1);
    if (fuse) {
        // Debian's libtorch has no LLVM: NNC's CPU fusion groups then run through its IR evaluator.
        torch::jit::overrideCanFuseOnCPU(true);
        torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
    }
    if (probe) {
        // The support cache is keyed by this line: the adapter's version and op count are in it.
        std::printf("libtorch %s (tensoracle-torch %s, %zu ONNX ops mapped)\n", TORCH_VERSION, tensoracle::version_string, tb::op_table().size());
        return 0;
    }
    if (worker) {
        to::campaign::serve_worker_requests(std::cin, std::cout, [&](const to::campaign::case_paths& c) {
            const auto r = serve(c, md);
            return std::pair{r.status, r.message};
        });
        return 0;
    }
    if (paths.size() != 3) return usage();
    const auto r = serve({paths[0], paths[1], paths[2], 0}, md);
    if (!r.message.empty()) std::fprintf(stderr, "%s\n", r.message.c_str());
    return r.code;
}
