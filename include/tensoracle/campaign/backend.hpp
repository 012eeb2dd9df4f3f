// tensoracle: backends, the systems under test a campaign runs each case on.
//
// A backend compiles and runs one ONNX case. Three kinds, one result type:
//  - command_backend: any executable, once per case, following the file
//    protocol of docs/BACKENDS.md (model.onnx, input_<k>.pb in, output_<k>.pb out,
//    exit 0 ran / 3 did not load / other runtime error / signal crash);
//  - worker_backend: a persistent executable given case paths on stdin, one
//    JSON reply line per case, restarted after a crash or a hang;
//  - callable_backend: C++ callables (prepare + run on tensors), run in a
//    forked child by default so that a crash or hang is classified too.
// Needs ONNX (libonnx, protobuf) for the files and nlohmann/json for replies.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensoracle/campaign/process.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/core/tensor.hpp"
#include "tensoracle/graph/graph.hpp"
#include "tensoracle/io/onnx.hpp"

namespace tensoracle::campaign {

/// How one run of a backend on one case ended, before any comparison.
enum class run_status {
    ran,              ///< outputs read back
    unsupported,      ///< the backend lacks an op, a kernel or a type (by its own evidence)
    compile_failure,  ///< did not load or compile, for any other reason
    runtime_error,    ///< loaded, then failed while running
    crash,            ///< killed by a signal (or a wrapper's exit code 128 + N)
    hang,             ///< past the time-out; its process group was killed
    bad_output,       ///< said it ran, but its outputs break the protocol (missing, unreadable, too many)
};

[[nodiscard]] constexpr std::string_view to_string(run_status s) noexcept {
    switch (s) {
        case run_status::ran: return "ran";
        case run_status::unsupported: return "unsupported";
        case run_status::compile_failure: return "compile_failure";
        case run_status::runtime_error: return "runtime_error";
        case run_status::crash: return "crash";
        case run_status::hang: return "hang";
        case run_status::bad_output: return "bad_output";
    }
    return "unknown";
}

/// One case on disk, as a backend receives it.
struct case_paths {
    std::filesystem::path model;    ///< model.onnx
    std::filesystem::path inputs;   ///< folder of input_<k>.pb, graph-input order
    std::filesystem::path outputs;  ///< empty folder for output_<k>.pb, graph-output order
    std::size_t output_count = 0;   ///< outputs the graph has
};

struct backend_run {
    run_status status = run_status::ran;
    std::string message;  ///< the first line that says what went wrong (stderr, signal, time-out)
    process_result process;
    std::vector<tensor> outputs;  ///< when ran: graph-output order
};

/// The backend could not be started at all (a command that does not exist):
/// a set-up error the campaign stops on, naming the backend.
class backend_unavailable : public error {
public:
    using error::error;
};

class backend {
public:
    explicit backend(std::string name) : name_(std::move(name)) {
        if (name_.empty()) throw error("tensoracle::campaign::backend", "a backend needs a name");
    }
    virtual ~backend() = default;
    backend(const backend&) = delete;
    backend& operator=(const backend&) = delete;

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    /// Runs one case; never throws for what the system under test does.
    [[nodiscard]] virtual backend_run run(const case_paths& c, double timeout_seconds) = 0;
    /// A copy for another thread (workers are per thread).
    [[nodiscard]] virtual std::unique_ptr<backend> clone() const = 0;

private:
    std::string name_;
};

namespace detail {

/// `line` with each C++ source context an assertion message carries
/// ("/src/pad.cc:422 Status ns::PadImpl(Ctx*, const V&) [with T = unsigned int; V = ...]
/// data_rank > 0 was false") cut to the function's name ("ns::PadImpl: data_rank > 0
/// was false"). Such contexts run to hundreds of characters before the condition
/// that says what failed, and their template arguments name the kernel's
/// instantiation (uint32 for every 4-byte type), not the model's types.
[[nodiscard]] inline std::string without_source_context(std::string line) {
    auto is_space = [](char c) { return c == ' ' || c == '\t'; };
    // `from`..`to` a balanced group opening at `from` (with `open`), or npos.
    auto close_of = [&](std::size_t from, char open, char close) {
        int depth = 0;
        for (std::size_t k = from; k < line.size(); ++k) {
            if (line[k] == open) ++depth;
            if (line[k] == close && --depth == 0) return k;
        }
        return std::string::npos;
    };
    std::size_t search = 0;
    while (search < line.size()) {
        // A word "<path with a '/'>:<line number>".
        std::size_t b = search;
        while (b < line.size() && is_space(line[b])) ++b;
        std::size_t e = b;
        while (e < line.size() && !is_space(line[e])) ++e;
        if (b >= line.size()) break;
        const auto word = std::string_view(line).substr(b, e - b);
        const auto colon = word.rfind(':');
        const bool path_line = word.find('/') != std::string_view::npos && colon != std::string_view::npos && colon + 1 < word.size() &&
                               std::all_of(word.begin() + static_cast<std::ptrdiff_t>(colon) + 1, word.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!path_line) {
            search = e;
            continue;
        }
        // Then a declaration up to its parameter list: "[virtual] R ns::f(...)".
        const auto paren = line.find('(', e);
        if (paren == std::string::npos || paren - e > 200) break;
        std::size_t n = paren;
        while (n > e && !is_space(line[n - 1]) && line[n - 1] != '*' && line[n - 1] != '&') --n;
        const auto name = line.substr(n, paren - n);
        auto end = close_of(paren, '(', ')');
        // A qualified name only: "/src/x.cc:1 Check failed (n > 0)" is no declaration.
        if (name.find("::") == std::string::npos || end == std::string::npos) break;
        ++end;
        for (const std::string_view q : {" const", " volatile", " noexcept", " override"}) {
            if (std::string_view(line).substr(end, q.size()) == q) end += q.size();
        }
        std::size_t w = end;
        while (w < line.size() && is_space(line[w])) ++w;
        if (std::string_view(line).substr(w, 6) == "[with ") {
            const auto c = close_of(w, '[', ']');
            if (c == std::string::npos) break;
            end = c + 1;
        }
        const std::string replacement = name + ":";
        line.replace(b, end - b, replacement);
        search = b + replacement.size();
    }
    return line;
}

/// The first non-empty line of `text`, trimmed, without source contexts
/// (without_source_context), cut to 300 characters.
[[nodiscard]] inline std::string first_line(const std::string& text) {
    std::size_t b = 0;
    while (b < text.size()) {
        auto e = text.find('\n', b);
        if (e == std::string::npos) e = text.size();
        std::string line = text.substr(b, e - b);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
        std::size_t s = 0;
        while (s < line.size() && (line[s] == ' ' || line[s] == '\t')) ++s;
        if (s < line.size()) return without_source_context(line.substr(s)).substr(0, 300);
        b = e + 1;
    }
    return {};
}

[[nodiscard]] inline std::string signal_name(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

/// Exit 3: "unsupported" when stderr says so on a line of its own ("unsupported: ..."), else compile failure.
[[nodiscard]] inline bool says_unsupported(const std::string& err) {
    std::size_t b = 0;
    while (b <= err.size()) {
        auto e = err.find('\n', b);
        if (e == std::string::npos) e = err.size();
        if (err.compare(b, 12, "unsupported:") == 0) return true;
        b = e + 1;
    }
    return false;
}

/// Reads output_0.pb .. output_{n-1}.pb; anything else in the folder is a protocol break.
inline void read_outputs(const case_paths& c, backend_run& r) {
    for (std::size_t k = 0; k < c.output_count; ++k) {
        const auto p = c.outputs / ("output_" + std::to_string(k) + ".pb");
        std::error_code ec;
        if (!std::filesystem::exists(p, ec)) {
            r.status = run_status::bad_output;
            r.message = "exited 0 but wrote " + std::to_string(k) + " of " + std::to_string(c.output_count) +
                        " outputs (" + p.filename().string() + " missing)";
            r.outputs.clear();
            return;
        }
        try {
            r.outputs.push_back(io::load_tensor(p));
        } catch (const unsupported_error& e) {
            // A valid tensor of an element type the kit has no kernels for (uint32 ...):
            // nothing to compare it with, which is no fault of the backend's.
            r.status = run_status::unsupported;
            r.message = "tensoracle cannot compare " + p.filename().string() + ": " + e.what();
            r.outputs.clear();
            return;
        } catch (const std::exception& e) {
            r.status = run_status::bad_output;
            r.message = p.filename().string() + " is not a readable TensorProto: " + e.what();
            r.outputs.clear();
            return;
        }
    }
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(c.outputs, ec)) {
        const auto n = entry.path().filename().string();
        if (n.rfind("output_", 0) != 0) continue;
        const auto k = n.substr(7, n.size() - 7 - (n.size() >= 3 && n.ends_with(".pb") ? 3 : 0));
        bool numeric = !k.empty() && k.find_first_not_of("0123456789") == std::string::npos;
        // More than 18 digits is past any output count (and past what stoull reads).
        if (!numeric || k.size() > 18 || std::stoull(k) >= c.output_count) {
            r.status = run_status::bad_output;
            r.message = "wrote " + n + " but the graph has " + std::to_string(c.output_count) + " output(s)";
            r.outputs.clear();
            return;
        }
    }
}

/// Classifies a one-shot run by the protocol, then reads the outputs of a run that went well.
[[nodiscard]] inline backend_run classify_exit(process_result p, const case_paths& c, double timeout_seconds) {
    backend_run r;
    switch (p.kind) {
        case exit_kind::not_started:
            throw backend_unavailable("tensoracle::campaign::backend", p.error_message);
        case exit_kind::timed_out:
            r.status = run_status::hang;
            r.message = "no result after " + std::to_string(static_cast<long long>(timeout_seconds)) + " s (killed)";
            break;
        case exit_kind::signalled:
            r.status = run_status::crash;
            r.message = "killed by " + signal_name(p.signal);
            break;
        case exit_kind::exited:
            if (p.exit_code == 0) {
                r.status = run_status::ran;
            } else if (p.exit_code == 3) {
                r.status = says_unsupported(p.err) ? run_status::unsupported : run_status::compile_failure;
                r.message = first_line(p.err);
                if (r.message.empty()) r.message = "exit 3 (no message on stderr)";
            } else if (p.exit_code > 128 && p.exit_code <= 128 + 64) {
                r.status = run_status::crash;  // a wrapper shell reporting signal N
                r.message = "killed by " + signal_name(p.exit_code - 128) + " (exit code " + std::to_string(p.exit_code) + ")";
            } else {
                r.status = run_status::runtime_error;
                r.message = first_line(p.err);
                if (r.message.empty()) r.message = "exit code " + std::to_string(p.exit_code) + " (no message on stderr)";
            }
            break;
    }
    r.process = std::move(p);
    if (r.status == run_status::ran) read_outputs(c, r);
    return r;
}

/// `word` with every placeholder ("{model}") replaced by its value.
[[nodiscard]] inline std::string substitute(std::string word, std::initializer_list<std::pair<std::string_view, std::string>> subs) {
    for (const auto& [key, value] : subs) {
        for (auto p = word.find(key); p != std::string::npos; p = word.find(key, p + value.size())) word.replace(p, key.size(), value);
    }
    return word;
}

[[nodiscard]] inline std::string fill_placeholders(std::string word, const case_paths& c) {
    return substitute(std::move(word), {{"{model}", c.model.string()}, {"{inputs}", c.inputs.string()}, {"{outputs}", c.outputs.string()}});
}

}  // namespace detail

/// An executable run once per case; `command` holds {model}, {inputs} and {outputs}.
class command_backend final : public backend {
public:
    command_backend(std::string name, std::vector<std::string> command) : backend(std::move(name)), command_(std::move(command)) {
        if (command_.empty()) throw error("tensoracle::campaign::command_backend(" + this->name() + ")", "empty command");
    }
    [[nodiscard]] backend_run run(const case_paths& c, double timeout_seconds) override {
        std::vector<std::string> argv;
        for (const auto& w : command_) argv.push_back(detail::fill_placeholders(w, c));
        try {
            return detail::classify_exit(run_process(argv, process_options::with_timeout(timeout_seconds)), c, timeout_seconds);
        } catch (const backend_unavailable& e) {
            throw backend_unavailable("backend '" + name() + "'", e.what());
        }
    }
    [[nodiscard]] std::unique_ptr<backend> clone() const override { return std::make_unique<command_backend>(name(), command_); }
    [[nodiscard]] const std::vector<std::string>& command() const noexcept { return command_; }

private:
    std::vector<std::string> command_;
};

/// A persistent executable: request "MODEL\tINPUT_DIR\tOUTPUT_DIR\n" on stdin, reply one
/// JSON line {"status": "ok" | "unsupported" | "compile_failure" | "runtime_error", "message": "..."}.
class worker_backend final : public backend {
public:
    worker_backend(std::string name, std::vector<std::string> command)
        : backend(std::move(name)), command_(command), worker_(std::move(command)) {}

    [[nodiscard]] backend_run run(const case_paths& c, double timeout_seconds) override {
        auto reply = worker_.ask(c.model.string() + "\t" + c.inputs.string() + "\t" + c.outputs.string(), timeout_seconds);
        backend_run r;
        if (reply.process.kind == exit_kind::not_started) {
            throw backend_unavailable("backend '" + name() + "'", reply.process.error_message);
        }
        if (!reply.line) {
            // The worker died or hung while answering: classified like a one-shot run.
            auto p = reply.process;
            if (p.kind == exit_kind::exited && (p.exit_code == 0 || p.exit_code == 3)) p.exit_code = 1;  // no reply is never "ran"
            r = detail::classify_exit(std::move(p), c, timeout_seconds);
            if (r.status == run_status::runtime_error) r.message = "worker exited without replying: " + r.message;
            return r;
        }
        r.process = reply.process;
        if (!read_worker_reply(*reply.line, c, r)) worker_.stop();  // it may be out of step with us now
        return r;
    }

    /// Reads one reply line of the worker protocol into r (status, message, and the
    /// outputs for "ok"); false when the line is not a protocol line (r is then
    /// bad_output, saying so). Any bytes a worker writes end in one of these.
    static bool read_worker_reply(const std::string& line, const case_paths& c, backend_run& r) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        const std::string status = j.is_object() && j.contains("status") && j["status"].is_string() ? j["status"].get<std::string>() : "";
        r.message = j.is_object() && j.contains("message") && j["message"].is_string() ? detail::first_line(j["message"].get<std::string>()) : "";
        if (status == "ok") {
            r.status = run_status::ran;
            detail::read_outputs(c, r);
        } else if (status == "unsupported") {
            r.status = run_status::unsupported;
        } else if (status == "compile_failure") {
            r.status = run_status::compile_failure;
        } else if (status == "runtime_error") {
            r.status = run_status::runtime_error;
        } else {
            r.status = run_status::bad_output;
            r.message = "worker reply is not a protocol line: " + detail::first_line(line);
            return false;
        }
        return true;
    }
    [[nodiscard]] std::unique_ptr<backend> clone() const override { return std::make_unique<worker_backend>(name(), command_); }
    [[nodiscard]] std::size_t starts() const noexcept { return worker_.starts(); }

private:
    std::vector<std::string> command_;
    worker_process worker_;
};

/// A system under test as C++: `prepare` compiles a model into a runner, which
/// takes and returns tensors in graph-input and graph-output order.
using case_runner = std::function<std::vector<tensor>(const std::vector<tensor>&)>;
using case_preparer = std::function<case_runner(const graph::graph&)>;

/// Serves one case of the executable protocol with C++: reads and prepares the model
/// (exit 3 if that fails, with "unsupported: ..." for tensoracle::unsupported_error),
/// reads the inputs and runs (exit 1 if that fails, 3 for unsupported_error), writes
/// the outputs (exit 0). The message goes to `err`. Both callable_backend and
/// `tensoracle run-reference` answer cases this way.
inline int serve_case(const case_paths& c, const case_preparer& prepare, std::string& err) {
    auto refuse = [&](const std::exception& e, int code) {
        const bool unsupported = dynamic_cast<const unsupported_error*>(&e) != nullptr;
        err = (unsupported ? std::string("unsupported: ") : std::string()) + e.what() + "\n";
        return unsupported ? 3 : code;
    };
    graph::graph g;
    case_runner run;
    try {
        g = io::load_model(c.model);
        run = prepare(g);
    } catch (const std::exception& e) {
        return refuse(e, 3);
    }
    try {
        std::vector<tensor> inputs;
        for (std::size_t k = 0; k < g.inputs.size(); ++k) inputs.push_back(io::load_tensor(c.inputs / ("input_" + std::to_string(k) + ".pb")));
        const auto outputs = run(inputs);
        for (std::size_t k = 0; k < outputs.size(); ++k) {
            io::save_tensor(outputs[k], c.outputs / ("output_" + std::to_string(k) + ".pb"), k < g.outputs.size() ? g.outputs[k].name : "");
        }
    } catch (const std::exception& e) {
        return refuse(e, 1);
    }
    return 0;
}

/// The persistent-worker side of the protocol (docs/BACKENDS.md, section 2): reads
/// `MODEL<TAB>INPUT_DIR<TAB>OUTPUT_DIR` lines from `in` until it ends and answers each
/// with one JSON line on `out`, flushed. `serve` returns the reply's status word ("ok",
/// "unsupported", "compile_failure", "runtime_error") and message; a line that is not a
/// request is answered as a runtime error without calling it.
inline void serve_worker_requests(std::istream& in, std::ostream& out,
                                  const std::function<std::pair<std::string, std::string>(const case_paths&)>& serve) {
    std::string line;
    while (std::getline(in, line)) {
        const auto t1 = line.find('\t');
        const auto t2 = t1 == std::string::npos ? std::string::npos : line.find('\t', t1 + 1);
        nlohmann::json reply;
        if (t2 == std::string::npos) {
            reply = {{"status", "runtime_error"}, {"message", "request is not MODEL<TAB>INPUTS<TAB>OUTPUTS"}};
        } else {
            const auto [status, message] = serve({line.substr(0, t1), line.substr(t1 + 1, t2 - t1 - 1), line.substr(t2 + 1), 0});
            reply = {{"status", status}, {"message", message}};
        }
        // Paths and messages are outside bytes, not always UTF-8: replaced, so the line
        // stays JSON (the kit's other JSON writers do the same).
        out << reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
    }
}

/// C++ callables as a backend (see serve_case). With `isolate` (the default) each case
/// runs in a forked child, so a crash or hang is classified; without, exceptions are.
class callable_backend final : public backend {
public:
    using runner = case_runner;
    using preparer = case_preparer;

    callable_backend(std::string name, preparer prepare, bool isolate = true)
        : backend(std::move(name)), prepare_(std::move(prepare)), isolate_(isolate) {
        if (!prepare_) throw error("tensoracle::campaign::callable_backend(" + this->name() + ")", "empty prepare function");
    }

    [[nodiscard]] backend_run run(const case_paths& c, double timeout_seconds) override {
        if (!isolate_) {
            process_result p;
            p.kind = exit_kind::exited;
            p.exit_code = serve_case(c, prepare_, p.err);
            return detail::classify_exit(std::move(p), c, timeout_seconds);
        }
        auto p = run_forked(
            [&] {
                std::string err;
                const int code = serve_case(c, prepare_, err);
                if (!err.empty()) std::fputs(err.c_str(), stderr);
                return code;
            },
            process_options::with_timeout(timeout_seconds));
        return detail::classify_exit(std::move(p), c, timeout_seconds);
    }
    [[nodiscard]] std::unique_ptr<backend> clone() const override {
        return std::make_unique<callable_backend>(name(), prepare_, isolate_);
    }

private:
    preparer prepare_;
    bool isolate_;
};

}  // namespace tensoracle::campaign
