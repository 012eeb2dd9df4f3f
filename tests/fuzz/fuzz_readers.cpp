// libFuzzer harness for every reader of outside bytes the kit has (issue: hostile
// input). One executable, so the kit's headers compile once: the target is chosen by
// $TENSORACLE_FUZZ_TARGET.
//
//   model    an ONNX model (ModelProto): import, validation, and the interpreter on
//            zero inputs where the inputs are small (under a 256 MiB memory budget)
//   tensor   a TensorProto (.pb): import of raw, typed and external data
//   case     a case folder's case.json beside a valid model (campaign::read_corpus_case)
//   config   a generator configuration (JSON), read and validated
//   journal  a campaign folder's results.jsonl: the summary and report.html written from it
//   worker   the worker protocol: request lines to a worker, a reply line to the campaign
//
// What the kit may do with bad bytes: throw tensoracle::error (or a subclass). A crash,
// a sanitizer report, a hang, any other exception (std::bad_alloc, std::out_of_range,
// nlohmann's) or a leak is a finding: the harness aborts on those exceptions so that
// libFuzzer keeps the input. Built and run by tests/fuzz/check_fuzz.cmake and
// scripts/fuzz (docs/HOSTILE_INPUT.md).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <unistd.h>

#include <tensoracle/campaign/backend.hpp>
#include <tensoracle/campaign/campaign.hpp>
#include <tensoracle/campaign/report.hpp>
#include <tensoracle/gen/config_json.hpp>
#include <tensoracle/graph/interpreter.hpp>
#include <tensoracle/io/onnx.hpp>

namespace {

namespace to = tensoracle;
namespace fs = std::filesystem;

enum class target { model, tensor, case_folder, config, journal, worker };
target chosen = target::model;
fs::path scratch;  // a folder of this process's own

void write_file(const fs::path& p, const std::uint8_t* data, std::size_t size) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

[[noreturn]] void finding(const char* what, const std::exception& e) {
    std::fprintf(stderr, "tensoracle fuzz: %s escaped as %s: %s\n", what, typeid(e).name(), e.what());
    std::abort();
}

void fuzz_model(const std::uint8_t* data, std::size_t size) {
    onnx::ModelProto m;
    if (!m.ParseFromArray(data, static_cast<int>(size))) return;
    const auto g = to::io::from_model_proto(m, scratch);
    g.validate();
    std::map<std::string, to::tensor, std::less<>> feeds;
    std::uint64_t elements = 0;
    for (const auto& in : g.inputs) {
        if (!in.shape) return;
        elements += to::element_count(*in.shape);
        if (elements > (1u << 16)) return;
        feeds.emplace(in.name, to::tensor::zeros(in.type, *in.shape));
    }
    (void)to::graph::run(g, feeds);
}

void fuzz_tensor(const std::uint8_t* data, std::size_t size) {
    onnx::TensorProto t;
    if (!t.ParseFromArray(data, static_cast<int>(size))) return;
    (void)to::io::from_proto(t, scratch);
}

void fuzz_case(const std::uint8_t* data, std::size_t size) {
    const auto dir = scratch / "case";
    if (!fs::exists(dir / "model.onnx")) {
        to::graph::graph g;
        g.inputs = {{"x", to::dtype::f32, to::shape_type{2}}};
        g.outputs = {{"y", to::dtype::f32, to::shape_type{2}}};
        g.nodes = {{"Relu", {"x"}, {"y"}, {}, "relu", ""}};
        fs::create_directories(dir / "test_data_set_0");
        to::io::save_model(g, dir / "model.onnx");
        to::io::save_tensor(to::tensor::zeros(to::dtype::f32, {2}), dir / "test_data_set_0" / "input_0.pb");
    }
    write_file(dir / "case.json", data, size);
    (void)to::campaign::read_corpus_case(dir);
}

void fuzz_config(const std::uint8_t* data, std::size_t size) {
    const auto j = nlohmann::json::parse(data, data + size, nullptr, false);
    if (j.is_discarded()) return;
    (void)to::gen::config_from_json(j);  // reads and validates every key
}

void fuzz_journal(const std::uint8_t* data, std::size_t size) {
    const auto dir = scratch / "campaign";
    fs::create_directories(dir);
    write_file(dir / "results.jsonl", data, size);
    to::campaign::summary_scope sc;
    sc.dir = dir;
    sc.backends = {"b"};
    sc.includes = [](std::uint64_t) { return true; };
    sc.requested = 1;
    (void)to::campaign::write_summary(sc);
    (void)to::campaign::write_report(dir);
}

void fuzz_worker(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    // The worker's side: request lines, each answered with one JSON line.
    std::istringstream in(bytes);
    std::ostringstream out;
    to::campaign::serve_worker_requests(in, out, [](const to::campaign::case_paths& c) {
        return std::pair<std::string, std::string>{"runtime_error", c.model.string()};
    });
    // The campaign's side: the first line as a worker's reply, outputs read from a folder
    // the rest of the bytes name files in.
    const auto dir = scratch / "outputs";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const auto nl = bytes.find('\n');
    std::istringstream names(nl == std::string::npos ? std::string() : bytes.substr(nl + 1));
    std::string name;
    for (int k = 0; k < 4 && std::getline(names, name); ++k) {
        if (name.empty() || name.find('/') != std::string::npos || name == "." || name == ".." || name.size() > 200) continue;
        std::ofstream(dir / name, std::ios::binary) << bytes.substr(0, 64);
    }
    to::campaign::backend_run r;
    (void)to::campaign::worker_backend::read_worker_reply(bytes.substr(0, nl), {dir / "model.onnx", dir, dir, 2}, r);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const char* t = std::getenv("TENSORACLE_FUZZ_TARGET");
    const std::string_view name = t != nullptr ? t : "";
    if (name == "model") chosen = target::model;
    else if (name == "tensor") chosen = target::tensor;
    else if (name == "case") chosen = target::case_folder;
    else if (name == "config") chosen = target::config;
    else if (name == "journal") chosen = target::journal;
    else if (name == "worker") chosen = target::worker;
    else {
        std::fprintf(stderr, "set TENSORACLE_FUZZ_TARGET to model, tensor, case, config, journal or worker\n");
        std::exit(2);
    }
    scratch = fs::temp_directory_path() / ("tensoracle-fuzz-" + std::string(name) + "-" + std::to_string(::getpid()));
    fs::create_directories(scratch);
    to::set_memory_limit(std::uint64_t{256} << 20);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        switch (chosen) {
            case target::model: fuzz_model(data, size); break;
            case target::tensor: fuzz_tensor(data, size); break;
            case target::case_folder: fuzz_case(data, size); break;
            case target::config: fuzz_config(data, size); break;
            case target::journal: fuzz_journal(data, size); break;
            case target::worker: fuzz_worker(data, size); break;
        }
    } catch (const to::error&) {
        // The kit's answer to bad bytes.
    } catch (const std::exception& e) {
        finding("an exception that is not a tensoracle::error", e);
    }
    return 0;
}
