// The executable backend protocol: every way a backend can end is classified,
// and protocol breaks (missing, unreadable or extra outputs) are named.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <tensoracle/campaign/backend.hpp>
#include <tensoracle/campaign/campaign.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace campaign_backend_test {

namespace tc = tensoracle::campaign;
namespace fs = std::filesystem;
using tensoracle::tensor;

namespace {

struct case_dir {
    fs::path root;
    tc::case_paths paths;
    fs::path good_output;  // a valid output_0.pb to copy
    case_dir() {
        root = fs::temp_directory_path() / ("tensoracle_backend_test_" + std::to_string(::getpid()));
        fs::remove_all(root);
        fs::create_directories(root / "inputs");
        fs::create_directories(root / "outputs");
        paths = {root / "model.onnx", root / "inputs", root / "outputs", 1};
        good_output = root / "good.pb";
        tensoracle::io::save_tensor(tensor(tensoracle::array<float>{1.f, 2.f}), good_output, "y");
    }
    ~case_dir() { fs::remove_all(root); }
    tc::backend_run run(const std::string& script, double timeout = 5) {
        fs::remove_all(paths.outputs);
        fs::create_directories(paths.outputs);
        tc::command_backend b("sh", {"sh", "-c", script, "sh", "{model}", "{inputs}", "{outputs}"});
        return b.run(paths, timeout);
    }
};

}  // namespace

TEST_CASE("command_backend: each exit of the protocol gets its class") {
    case_dir d;
    const std::string cp = "cp " + d.good_output.string() + " \"$3/output_0.pb\"";
    auto r = d.run(cp);
    CHECK(r.status == tc::run_status::ran);
    REQUIRE(r.outputs.size() == 1);
    CHECK(r.outputs[0].shape() == tensoracle::shape_type{2});

    r = d.run("echo 'unsupported: no kernel for Foo(1)' >&2; exit 3");
    CHECK(r.status == tc::run_status::unsupported);
    CHECK(r.message == "unsupported: no kernel for Foo(1)");
    r = d.run("echo 'bad attribute' >&2; exit 3");
    CHECK(r.status == tc::run_status::compile_failure);
    CHECK(r.message == "bad attribute");
    r = d.run("echo 'out of memory' >&2; exit 1");
    CHECK(r.status == tc::run_status::runtime_error);
    r = d.run("exit 2");
    CHECK(r.status == tc::run_status::runtime_error);
    CHECK(r.message == "exit code 2 (no message on stderr)");
    r = d.run("kill -SEGV $$");
    CHECK(r.status == tc::run_status::crash);
    CHECK(r.message == "killed by SIGSEGV");
    r = d.run("exit 134");  // a wrapper shell reporting SIGABRT
    CHECK(r.status == tc::run_status::crash);
    CHECK(r.message.find("SIGABRT") != std::string::npos);
    r = d.run("sleep 30", 0.3);
    CHECK(r.status == tc::run_status::hang);
}

TEST_CASE("command_backend: outputs that break the protocol are bad_output, with the reason") {
    case_dir d;
    auto r = d.run("true");
    CHECK(r.status == tc::run_status::bad_output);
    CHECK(r.message.find("wrote 0 of 1 outputs") != std::string::npos);
    r = d.run("echo garbage > \"$3/output_0.pb\"");
    CHECK(r.status == tc::run_status::bad_output);
    CHECK(r.message.find("output_0.pb is not a readable TensorProto") != std::string::npos);
    r = d.run("cp " + d.good_output.string() + " \"$3/output_0.pb\"; cp " + d.good_output.string() + " \"$3/output_1.pb\"");
    CHECK(r.status == tc::run_status::bad_output);
    CHECK(r.message.find("output_1.pb but the graph has 1 output") != std::string::npos);
    r = d.run("cp " + d.good_output.string() + " \"$3/output_0.pb\"; cp " + d.good_output.string() + " \"$3/output_99999999999999999999999.pb\"");
    CHECK(r.status == tc::run_status::bad_output);
    CHECK(r.message.find("output_99999999999999999999999.pb but the graph has 1 output") != std::string::npos);
    // A command that does not exist stops the campaign, naming the backend.
    tc::command_backend missing("mine", {"/nonexistent/tool", "{model}"});
    CHECK_THROWS_WITH_AS((void)missing.run(d.paths, 1), doctest::Contains("backend 'mine'"), tc::backend_unavailable);
}

TEST_CASE("worker_backend: JSON replies, a garbled reply, a worker that dies") {
    case_dir d;
    const std::string script = "while IFS=\"$(printf '\\t')\" read m i o; do case $m in *die*) kill -KILL $$;; esac; cp " +
                               d.good_output.string() + " \"$o/output_0.pb\"; echo '{\"status\":\"ok\"}'; done";
    tc::worker_backend w("w", {"sh", "-c", script});
    auto r = w.run(d.paths, 5);
    CHECK(r.status == tc::run_status::ran);
    CHECK(r.outputs.size() == 1);
    auto dying = d.paths;
    dying.model = d.root / "die.onnx";
    r = w.run(dying, 5);
    CHECK(r.status == tc::run_status::crash);
    r = w.run(d.paths, 5);  // restarted
    CHECK(r.status == tc::run_status::ran);
    CHECK(w.starts() == 2);

    tc::worker_backend garbled("g", {"sh", "-c", "while read l; do echo 'not json'; done"});
    r = garbled.run(d.paths, 5);
    CHECK(r.status == tc::run_status::bad_output);
    CHECK(r.message.find("not a protocol line") != std::string::npos);

    // A reply holding bytes that are not UTF-8 is still read; a worker's reply of them is still JSON.
    tc::backend_run raw;
    CHECK(tc::worker_backend::read_worker_reply("{\"status\":\"runtime_error\",\"message\":\"bad \xff byte\"}", d.paths, raw) == false);
    CHECK(raw.status == tc::run_status::bad_output);
    std::istringstream requests("a\xff.onnx\tin\tout\n");
    std::ostringstream replies;
    tc::serve_worker_requests(requests, replies, [](const tc::case_paths& c) { return std::pair<std::string, std::string>{"runtime_error", c.model.string()}; });
    CHECK(replies.str() == "{\"message\":\"a\xef\xbf\xbd.onnx\",\"status\":\"runtime_error\"}\n");

    tc::worker_backend unsupported("u", {"sh", "-c", "while read l; do echo '{\"status\":\"unsupported\",\"message\":\"no Foo\"}'; done"});
    r = unsupported.run(d.paths, 5);
    CHECK(r.status == tc::run_status::unsupported);
    CHECK(r.message == "no Foo");
}

TEST_CASE("signatures: messages lose what changes between runs, and ids are stable") {
    CHECK(tc::normalize_message("Load model from /tmp/x/model.onnx failed at 0x7ffd1234: node n12_Add (opset 17)") ==
          "Load model from <path> failed at 0x#: node n#_Add (opset #)");
    // Relative paths too: the same failure from another campaign folder has the same signature.
    CHECK(tc::normalize_message("Load model from camp/.work/1/model.onnx failed:Type Error") ==
          tc::normalize_message("Load model from /tmp/other/.work/0/model.onnx failed:Type Error"));
    CHECK(tc::normalize_message("at /src/lrn.h:23 size_ % 2 == 1 was false.") == "at <path> size_ % # == # was false.");
    const tc::signature s{"onnxruntime", tc::outcome_class::mismatch, "reference", "op Sigmoid f32"};
    CHECK(s.key() == "onnxruntime|mismatch|reference|op Sigmoid f32");
    // FNV-1a 64 of the key: the same id on any machine, in any run or shard.
    CHECK(s.id() == tensoracle::fnv1a_hex("onnxruntime|mismatch|reference|op Sigmoid f32"));
    CHECK(tensoracle::fnv1a_hex("") == "cbf29ce484222325");
    CHECK(tensoracle::fnv1a_hex("a") == "af63dc4c8601ec8c");
}

TEST_CASE("messages: a C++ source context is cut to its function's name, before the 300-character cut") {
    namespace d = tensoracle::campaign::detail;
    const std::string ort =
        "Non-zero status code returned while running Pad node. Name:'n0_Pad' Status Message: "
        "/onnxruntime_src/onnxruntime/core/providers/cpu/tensor/pad.cc:422 onnxruntime::common::Status "
        "onnxruntime::PadImpl(OpKernelContext*, const PadsVector&, const PadsVector&, const Mode&, T) [with T = unsigned int; "
        "PadsVector = absl::lts_20250814::InlinedVector<long int, 10, std::allocator<long int> >] data_rank > 0 was false. "
        "Input tensor has no dimensions";
    const std::string cut = "Non-zero status code returned while running Pad node. Name:'n0_Pad' Status Message: "
                            "onnxruntime::PadImpl: data_rank > 0 was false. Input tensor has no dimensions";
    CHECK(d::without_source_context(ort) == cut);
    // The condition survives the cut to 300 characters; the kernel's instantiation
    // (uint8 for a 1-byte type) does not split one failure into several.
    CHECK(d::first_line("\n  " + ort + "\nsecond line") == cut);
    auto u8 = ort;
    u8.replace(u8.find("unsigned int"), 12, "unsigned char");
    CHECK(d::first_line(u8) == cut);
    // Nested: an If whose branch failed; a virtual member with a pointer result, a const member.
    CHECK(d::without_source_context("a /x/op_kernel.cc:83 virtual OrtValue* ns::Ctx::OutputMLValue(int, const ns::Shape&) "
                                    "status.IsOK() was false. b /y/k.h:42 const T* ns::Ctx::Input(int) const [with T = ns::Tensor] "
                                    "Missing Input: x") == "a ns::Ctx::OutputMLValue: status.IsOK() was false. b ns::Ctx::Input: Missing Input: x");
    // Not a source context: left alone.
    for (const std::string m : {"at /src/lrn.h:23 size_ % 2 == 1 was false.", "Load model from /tmp/m.onnx failed (x)", "plain (text) [with]", "/a/b.cc:1 Check failed (n > 0)"}) {
        CHECK(d::without_source_context(m) == m);
    }
}

TEST_CASE("within_reference_precision: a backend as close to float64 truth as our reference is not blamed") {
    const tensor truth(tensoracle::array<double>{1.0, 2.0});
    const tensor ref(tensoracle::array<float>{1.001f, 2.f});  // our f32 reference, 1e-3 off at element 0
    const tensoracle::tolerance tol{1e-6, 1e-6};
    CHECK(tc::within_reference_precision(tensor(tensoracle::array<float>{1.0005f, 2.f}), ref, truth, tol));
    CHECK(tc::within_reference_precision(tensor(tensoracle::array<float>{0.9995f, 2.f}), ref, truth, tol));
    CHECK_FALSE(tc::within_reference_precision(tensor(tensoracle::array<float>{1.002f, 2.f}), ref, truth, tol));
    CHECK_FALSE(tc::within_reference_precision(tensor(tensoracle::array<float>{1.f, 2.01f}), ref, truth, tol));
    CHECK_FALSE(tc::within_reference_precision(tensor(tensoracle::array<float>{NAN, 2.f}), ref, truth, tol));
    // Overflow in the low precision on both sides: the backend matches our reference's Inf.
    const tensor big_truth(tensoracle::array<double>{1e39, 2.0});
    const tensor big_ref(tensoracle::array<float>{INFINITY, 2.f});
    CHECK(tc::within_reference_precision(tensor(tensoracle::array<float>{INFINITY, 2.f}), big_ref, big_truth, tol));
    CHECK_FALSE(tc::within_reference_precision(tensor(tensoracle::array<float>{-INFINITY, 2.f}), big_ref, big_truth, tol));
    CHECK_FALSE(tc::within_reference_precision(tensor(tensoracle::array<float>{1.f}), ref, truth, tol));  // shape
}

TEST_CASE("callable_backend: a C++ system under test in a forked child, its crash, hang and exceptions classified") {
    case_dir d;
    tensoracle::graph::graph g;
    g.name = "relu";
    g.inputs = {{"x", tensoracle::dtype::f32, tensoracle::shape_type{2}}};
    g.outputs = {{"y", tensoracle::dtype::f32, tensoracle::shape_type{2}}};
    g.nodes = {{"Relu", {"x"}, {"y"}, {}, "n0", ""}};
    tensoracle::io::save_model(g, d.paths.model);
    tensoracle::io::save_tensor(tensor(tensoracle::array<float>{-1.f, 2.f}), d.paths.inputs / "input_0.pb", "x");
    auto fresh = [&] {
        fs::remove_all(d.paths.outputs);
        fs::create_directories(d.paths.outputs);
        return d.paths;
    };
    using runner = tc::callable_backend::runner;
    // A correct system: its outputs are read back in graph-output order.
    tc::callable_backend good("good", [](const tensoracle::graph::graph& m) -> runner {
        if (m.nodes.size() != 1) throw tensoracle::error("test", "the model did not come back");
        return [](const std::vector<tensor>& in) {
            auto a = in.at(0).to<float>();
            for (auto& v : a) v = v > 0 ? v : 0.f;
            return std::vector<tensor>{tensor(a)};
        };
    });
    auto r = good.run(fresh(), 5);
    REQUIRE(r.status == tc::run_status::ran);
    CHECK(r.outputs.at(0).to<float>() == tensoracle::array<float>{0.f, 2.f});

    auto with = [&](runner body, bool isolate = true) {
        tc::callable_backend b("b", [body](const tensoracle::graph::graph&) { return body; }, isolate);
        return b.run(fresh(), 0.5);
    };
    CHECK(with([](const std::vector<tensor>&) -> std::vector<tensor> { std::abort(); }).status == tc::run_status::crash);
    CHECK(with([](const std::vector<tensor>&) -> std::vector<tensor> { for (;;) ::pause(); }).status == tc::run_status::hang);
    r = with([](const std::vector<tensor>&) -> std::vector<tensor> { throw tensoracle::error("mine", "out of registers"); });
    CHECK(r.status == tc::run_status::runtime_error);
    CHECK(r.message.find("out of registers") != std::string::npos);
    r = with([](const std::vector<tensor>&) -> std::vector<tensor> { throw tensoracle::unsupported_error("mine", "no Relu"); }, false);
    CHECK(r.status == tc::run_status::unsupported);  // in-process: exceptions still classified

    tc::callable_backend refuses("r", [](const tensoracle::graph::graph&) -> runner { throw tensoracle::error("compile", "bad graph"); });
    r = refuses.run(fresh(), 5);
    CHECK(r.status == tc::run_status::compile_failure);
    CHECK(r.message.find("bad graph") != std::string::npos);
}

TEST_CASE("widen_to_float64: values an op takes only in float32 (Resize's scales) stay float32, so the re-evaluation runs") {
    tensoracle::graph::graph g;
    g.inputs = {{"x", tensoracle::dtype::f16, tensoracle::shape_type{1, 1, 2}}};
    g.initializers.emplace("scales", tensor(tensoracle::array<float>{1.f, 1.f, 2.f}));
    g.nodes = {{"Resize", {"x", "", "scales"}, {"y"}, {}, "", ""}};
    g.outputs = {{"y", tensoracle::dtype::f16, tensoracle::shape_type{1, 1, 4}}};
    const auto w = tc::widen_to_float64(g);
    CHECK(w.inputs[0].type == tensoracle::dtype::f64);
    CHECK(w.outputs[0].type == tensoracle::dtype::f64);
    CHECK(w.initializers.at("scales").element_dtype() == tensoracle::dtype::f32);
    const auto r = tensoracle::graph::run(w, {{"x", tensor(tensoracle::array<double>{{{1.0, 3.0}}})}});
    CHECK(r.outputs.at("y").shape() == tensoracle::shape_type{1, 1, 4});
}

}  // namespace campaign_backend_test
