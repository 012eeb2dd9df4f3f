// GENERATED FILE - DO NOT EDIT.
// Made by scripts/amalgamate from include/tensoracle/campaign.hpp; edit those headers and rerun it.
// tensoracle: header-only test kit for deep-learning compilers and AD engines.
#pragma once
#include "onnx.hpp"
// ---- begin tensoracle/campaign.hpp ----
// tensoracle: differential campaigns against real runtimes (optional part:
// the ONNX part's dependencies; POSIX processes): backends, the campaign,
// support probing, reduction and reports. Includes <tensoracle/onnx.hpp>.


// ---- begin tensoracle/campaign/backend.hpp ----
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

// ---- begin tensoracle/campaign/process.hpp ----
// tensoracle: running a system under test in a process of its own (POSIX).
//
// A backend may crash, abort, hang or spawn children; none of that may take the
// campaign down. Every child runs in a new process group, so a time-out kills
// the whole group (a wrapper shell's children included), and the kit reads the
// child's stdout/stderr through pipes without ever blocking on a full one.
//
//   split_command("mytool run {model} 'a b'")  -> {"mytool", "run", "{model}", "a b"}
//   run_process(argv, {.timeout_seconds = 10})  -> exited / signalled / timed out / not started
//   run_forked([&] { ...; return 0; }, opts)    -> the same for a C++ callable
//   worker_process                               -> a persistent child spoken to by lines

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::campaign {

/// Splits a command line into words the way a POSIX shell does for quoting
/// ('single', "double" with \" \\ \$ \` escapes, backslash outside quotes), with
/// no expansion of variables, globs or `~`: the words are executed directly.
[[nodiscard]] inline std::vector<std::string> split_command(std::string_view line) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else if (c == '\'') {
            const auto end = line.find('\'', i + 1);
            if (end == std::string_view::npos) {
                throw error("tensoracle::campaign::split_command", "unterminated single quote in: " + std::string(line));
            }
            word.append(line.substr(i + 1, end - i - 1));
            i = end;
            in_word = true;
        } else if (c == '"') {
            std::size_t j = i + 1;
            for (; j < line.size() && line[j] != '"'; ++j) {
                if (line[j] == '\\' && j + 1 < line.size() && std::string_view("\"\\$`").find(line[j + 1]) != std::string_view::npos) ++j;
                word.push_back(line[j]);
            }
            if (j >= line.size()) {
                throw error("tensoracle::campaign::split_command", "unterminated double quote in: " + std::string(line));
            }
            i = j;
            in_word = true;
        } else if (c == '\\') {
            if (i + 1 >= line.size()) {
                throw error("tensoracle::campaign::split_command", "trailing backslash in: " + std::string(line));
            }
            word.push_back(line[++i]);
            in_word = true;
        } else {
            word.push_back(c);
            in_word = true;
        }
    }
    if (in_word) words.push_back(std::move(word));
    if (words.empty()) throw error("tensoracle::campaign::split_command", "empty command");
    return words;
}

/// How a child ended.
enum class exit_kind {
    exited,       ///< returned an exit code
    signalled,    ///< killed by a signal
    timed_out,    ///< ran past the time-out; the kit killed its process group
    not_started,  ///< could not be executed (message in `error_message`)
};

struct process_result {
    exit_kind kind = exit_kind::not_started;
    int exit_code = -1;  ///< when exited
    int signal = 0;      ///< when signalled
    std::string out, err;
    bool out_truncated = false, err_truncated = false;
    double seconds = 0.0;
    std::string error_message;  ///< when not started: why
};

namespace detail {
inline std::atomic<std::uint64_t> child_memory_limit{0};
}  // namespace detail

/// The memory every process the kit starts from now on may use (a backend, a worker,
/// a check command, and what they start): bytes of data segment and private writable
/// mappings (RLIMIT_DATA: heap and malloc's mmaps, not the address space reserved
/// with no access that JITs, V8 and sanitizers map, which RLIMIT_AS would count).
/// A system under test that eats the machine then fails an allocation and ends as a
/// classified failure, instead of the OOM killer ending the campaign. 0: no limit.
inline void set_backend_memory_limit(std::uint64_t bytes) { detail::child_memory_limit.store(bytes); }
[[nodiscard]] inline std::uint64_t backend_memory_limit() { return detail::child_memory_limit.load(); }

struct process_options {
    double timeout_seconds = 10.0;
    /// Bytes kept of each of stdout and stderr (the rest is read and dropped).
    std::size_t capture_limit = 64 * 1024;
    /// Fed to the child's stdin, which is then closed.
    std::string input;

    [[nodiscard]] static process_options with_timeout(double seconds) {
        process_options o;
        o.timeout_seconds = seconds;
        return o;
    }
};

namespace detail {

/// Writing to a child that died must fail with EPIPE, not kill the campaign:
/// the first feeding of a child sets SIGPIPE to ignored, process-wide.
inline void ignore_sigpipe() noexcept {
    static const bool once = [] {
        ::signal(SIGPIPE, SIG_IGN);
        return true;
    }();
    (void)once;
}

inline void close_fd(int& fd) noexcept {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

/// Kills a child's process group and reaps the child; returns its wait status.
inline int kill_group_and_reap(pid_t pid) noexcept {
    ::kill(-pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

/// Reads what is ready on `fd` into `sink` (up to `limit`); false at EOF or error.
inline bool drain(int fd, std::string& sink, bool& truncated, std::size_t limit) {
    char buf[8192];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    if (n == 0) return false;
    const std::size_t room = limit > sink.size() ? limit - sink.size() : 0;
    sink.append(buf, std::min(room, static_cast<std::size_t>(n)));
    if (static_cast<std::size_t>(n) > room) truncated = true;
    return true;
}

/// The parent's ends of live children's pipes, and a lock held from creating a
/// child's pipes until its own ends are closed in the parent. Campaign lanes
/// start children from several threads: a child forked while another thread's
/// pipes are half set up keeps that pipe's write end open for as long as it
/// lives, so a run that has finished waits for EOF and reads as a hang
/// (a forked child without exec keeps every live child's pipes). Under the lock
/// no thread forks while another's child ends are open, and every child closes
/// the registered ends first thing. The lock is a flag, not a mutex: a forked
/// child that starts children of its own must be able to release its copy.
struct child_pipes {
    std::atomic_flag busy;
    std::vector<int> parent_ends;

    void lock() noexcept {
        while (busy.test_and_set(std::memory_order_acquire)) busy.wait(true, std::memory_order_relaxed);
    }
    void unlock() noexcept {
        busy.clear(std::memory_order_release);
        busy.notify_one();
    }
};

inline child_pipes& live_child_pipes() {
    static child_pipes p;
    return p;
}

/// Closes a parent end of a child's pipe and forgets it.
inline void close_child_pipe(int& fd) noexcept {
    if (fd < 0) return;
    auto& p = live_child_pipes();
    const std::lock_guard held(p);
    std::erase(p.parent_ends, fd);
    ::close(fd);
    fd = -1;
}

/// Forks a child in a new process group with pipes on stdin/stdout/stderr.
/// The child runs `body`, which must not return (exec or _exit). An exec
/// failure travels back on a close-on-exec pipe as errno.
struct spawned {
    pid_t pid = -1;
    int in = -1, out = -1, err = -1, exec_errno = 0;
};

template <class Body>
spawned spawn(Body&& body, const char* where) {
    int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, status_pipe[2] = {-1, -1};
    auto& live = live_child_pipes();
    std::unique_lock held(live);  // a child never returns from here, so never unlocks through it
    // Reserved before the fork, so registering the new ends cannot fail after it.
    live.parent_ends.reserve(live.parent_ends.size() + 3);
    auto fail = [&](const char* what) {
        const int e = errno;
        for (int* fd : {&in_pipe[0], &in_pipe[1], &out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1], &status_pipe[0], &status_pipe[1]}) {
            close_fd(*fd);
        }
        throw error(where, std::string(what) + ": " + std::strerror(e));
    };
    // Close-on-exec from the start: children that other code forks never inherit them.
    if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
        ::pipe2(status_pipe, O_CLOEXEC) != 0) {
        fail("pipe");
    }
    const pid_t pid = ::fork();
    if (pid < 0) fail("fork");
    if (pid == 0) {
        for (const int fd : live.parent_ends) ::close(fd);
        live.parent_ends.clear();  // no allocation; this child's own children start from none
        live.busy.clear();
        if (const std::uint64_t limit = child_memory_limit.load(); limit != 0) {
            const rlimit r{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
            ::setrlimit(RLIMIT_DATA, &r);
        }
        ::setpgid(0, 0);
        ::signal(SIGPIPE, SIG_DFL);
        // dup2 leaves the copy without close-on-exec; a pipe end already on its number keeps it.
        const int onto[3][2] = {{in_pipe[0], 0}, {out_pipe[1], 1}, {err_pipe[1], 2}};
        for (const auto& [from, to] : onto) {
            if (from == to) {
                ::fcntl(to, F_SETFD, 0);
            } else {
                ::dup2(from, to);
            }
        }
        for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], status_pipe[0]}) {
            if (fd > 2) ::close(fd);
        }
        body(status_pipe[1]);
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // also here: the parent may signal the group before the child ran
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ::close(status_pipe[1]);
    live.parent_ends.insert(live.parent_ends.end(), {in_pipe[1], out_pipe[0], err_pipe[0]});
    held.unlock();
    spawned s;
    s.pid = pid;
    s.in = in_pipe[1];
    s.out = out_pipe[0];
    s.err = err_pipe[0];
    int e = 0;
    ssize_t n;
    while ((n = ::read(status_pipe[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
    ::close(status_pipe[0]);
    if (n == static_cast<ssize_t>(sizeof e)) s.exec_errno = e;
    return s;
}

/// spawn() running `argv` (argv[0] looked up on PATH) with the kit's environment.
inline spawned spawn_exec(const std::vector<std::string>& argv, const char* where) {
    if (argv.empty()) throw error(where, "empty argument list");
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    return spawn(
        [&](int status_fd) {
            ::execvp(args[0], args.data());
            const int e = errno;
            const ssize_t n = ::write(status_fd, &e, sizeof e);
            (void)n;
        },
        where);
}

[[nodiscard]] inline std::string cannot_execute(const std::string& program, int exec_errno) {
    return "cannot execute '" + program + "': " + std::strerror(exec_errno);
}

/// Feeds `input`, collects output until both pipes close, then waits; kills the
/// group at the deadline. Always reaps the child and closes every descriptor.
inline process_result supervise(spawned s, const process_options& o) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const auto deadline = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.timeout_seconds));
    process_result r;
    // A child that never reads its stdin must not block us: write what fits, then close.
    if (!o.input.empty()) {
        ignore_sigpipe();
        ::fcntl(s.in, F_SETFL, O_NONBLOCK);
        const ssize_t n = ::write(s.in, o.input.data(), o.input.size());
        (void)n;
    }
    close_child_pipe(s.in);
    bool out_open = true, err_open = true, timed_out = false;
    while (out_open || err_open) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        pollfd fds[2] = {{out_open ? s.out : -1, POLLIN, 0}, {err_open ? s.err : -1, POLLIN, 0}};
        const int k = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
        if (k < 0 && errno != EINTR) break;
        if (k <= 0) continue;
        if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) out_open = drain(s.out, r.out, r.out_truncated, o.capture_limit);
        if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) err_open = drain(s.err, r.err, r.err_truncated, o.capture_limit);
    }
    int status = 0;
    if (!timed_out) {
        // Pipes closed; the child may still run (it closed them itself): wait up to the deadline.
        for (;;) {
            const pid_t w = ::waitpid(s.pid, &status, WNOHANG);
            if (w == s.pid) break;
            if (w < 0 && errno != EINTR) break;
            if (clock::now() >= deadline) {
                timed_out = true;
                break;
            }
            ::usleep(1000);
        }
        ::kill(-s.pid, SIGKILL);  // leftovers of the group (a runner's own children)
    }
    if (timed_out) status = kill_group_and_reap(s.pid);
    close_child_pipe(s.out);
    close_child_pipe(s.err);
    r.seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (timed_out) {
        r.kind = exit_kind::timed_out;
    } else if (WIFSIGNALED(status)) {
        r.kind = exit_kind::signalled;
        r.signal = WTERMSIG(status);
    } else {
        r.kind = exit_kind::exited;
        r.exit_code = WEXITSTATUS(status);
    }
    return r;
}

}  // namespace detail

/// Runs `argv` (argv[0] looked up on PATH) with the kit's environment.
[[nodiscard]] inline process_result run_process(const std::vector<std::string>& argv, const process_options& o = {}) {
    auto s = detail::spawn_exec(argv, "tensoracle::campaign::run_process");
    if (s.exec_errno != 0) {
        process_result r;
        r.kind = exit_kind::not_started;
        r.error_message = detail::cannot_execute(argv[0], s.exec_errno);
        detail::close_child_pipe(s.in);
        detail::close_child_pipe(s.out);
        detail::close_child_pipe(s.err);
        int status = 0;
        while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
        }
        return r;
    }
    return detail::supervise(s, o);
}

/// Runs `body` in a forked child (its return value is the exit code; an
/// exception escaping it exits 1 with the message on stderr), supervised like
/// run_process: a segfault, abort or hang in `body` is classified, not suffered.
/// The child must not rely on threads of the parent (only the forking thread exists there).
[[nodiscard]] inline process_result run_forked(const std::function<int()>& body, const process_options& o = {}) {
    auto s = detail::spawn(
        [&](int status_fd) {
            ::close(status_fd);
            int code = 1;
            try {
                code = body();
            } catch (const std::exception& e) {
                const std::string m = std::string(e.what()) + "\n";
                const ssize_t n = ::write(2, m.data(), m.size());
                (void)n;
            } catch (...) {
                const ssize_t n = ::write(2, "unknown exception\n", 18);
                (void)n;
            }
            std::fflush(stdout);
            std::fflush(stderr);
            ::_exit(code);
        },
        "tensoracle::campaign::run_forked");
    return detail::supervise(s, o);
}

/// A persistent child spoken to by lines: one request line on its stdin, one
/// reply line on its stdout. After a crash, a hang or a closed pipe the next
/// request starts a fresh one. stderr is kept per request (what the child wrote
/// while it was answering), up to a limit.
class worker_process {
public:
    explicit worker_process(std::vector<std::string> argv, std::size_t capture_limit = 64 * 1024)
        : argv_(std::move(argv)), capture_limit_(capture_limit) {
        if (argv_.empty()) throw error("tensoracle::campaign::worker_process", "empty argument list");
    }
    worker_process(const worker_process&) = delete;
    worker_process& operator=(const worker_process&) = delete;
    ~worker_process() { stop(); }

    struct reply {
        process_result process;       ///< kind exited + exit_code 0 while the worker lives
        std::optional<std::string> line;  ///< the reply; empty when the worker died or hung
        bool restarted = false;       ///< a fresh worker had to be started for this request
    };

    /// Sends `request` (one line, no newline) and waits for one reply line.
    [[nodiscard]] reply ask(const std::string& request, double timeout_seconds) {
        reply r;
        if (s_.pid < 0) {
            start();
            r.restarted = starts_ > 1;
            if (s_.exec_errno != 0) {
                r.process.kind = exit_kind::not_started;
                r.process.error_message = detail::cannot_execute(argv_[0], s_.exec_errno);
                stop();
                return r;
            }
        }
        using clock = std::chrono::steady_clock;
        const auto start_time = clock::now();
        const auto deadline = start_time + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_seconds));
        const std::string line = request + "\n";
        std::size_t written = 0;
        bool out_open = true, err_open = s_.err >= 0;
        while (true) {
            if (const auto nl = pending_.find('\n'); nl != std::string::npos) {
                r.line = pending_.substr(0, nl);
                pending_.erase(0, nl + 1);
                break;
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
            if (left <= 0 || !out_open) break;
            pollfd fds[3] = {{s_.out, POLLIN, 0}, {err_open ? s_.err : -1, POLLIN, 0}, {written < line.size() ? s_.in : -1, POLLOUT, 0}};
            const int k = ::poll(fds, 3, static_cast<int>(std::min<long long>(left, 1000)));
            if (k < 0 && errno != EINTR) break;
            if (k <= 0) continue;
            if (fds[2].revents & (POLLERR | POLLHUP)) break;  // the worker closed its stdin
            if (fds[2].revents & POLLOUT) {
                const ssize_t n = ::write(s_.in, line.data() + written, line.size() - written);
                if (n < 0 && errno != EINTR && errno != EAGAIN) break;
                if (n > 0) written += static_cast<std::size_t>(n);
            }
            if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
                bool t = false;
                err_open = detail::drain(s_.err, r.process.err, t, capture_limit_);
                r.process.err_truncated |= t;
            }
            if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                bool t = false;
                out_open = detail::drain(s_.out, pending_, t, std::string::npos);
            }
        }
        r.process.seconds = std::chrono::duration<double>(clock::now() - start_time).count();
        if (r.line) {
            r.process.kind = exit_kind::exited;
            r.process.exit_code = 0;
            return r;
        }
        // No reply: the worker died, hung or closed its pipes. Classify and restart next time.
        const bool past_deadline = clock::now() >= deadline;
        int status = 0;
        bool reaped = false;
        if (!past_deadline) {
            // It may be exiting right now: give it until the deadline to be reaped.
            while (clock::now() < deadline) {
                const pid_t w = ::waitpid(s_.pid, &status, WNOHANG);
                if (w == s_.pid) {
                    reaped = true;
                    break;
                }
                ::usleep(1000);
            }
        }
        if (!reaped) {
            status = detail::kill_group_and_reap(s_.pid);
            r.process.kind = exit_kind::timed_out;
        } else if (WIFSIGNALED(status)) {
            r.process.kind = exit_kind::signalled;
            r.process.signal = WTERMSIG(status);
        } else {
            r.process.kind = exit_kind::exited;
            r.process.exit_code = WEXITSTATUS(status);
        }
        if (reaped) ::kill(-s_.pid, SIGKILL);
        s_.pid = -1;
        stop();
        return r;
    }

    /// Closes the worker's stdin, then kills its group.
    void stop() noexcept {
        detail::close_child_pipe(s_.in);
        if (s_.pid > 0) detail::kill_group_and_reap(s_.pid);
        s_.pid = -1;
        detail::close_child_pipe(s_.out);
        detail::close_child_pipe(s_.err);
        pending_.clear();
    }

    [[nodiscard]] std::size_t starts() const noexcept { return starts_; }

private:
    void start() {
        detail::ignore_sigpipe();
        s_ = detail::spawn_exec(argv_, "tensoracle::campaign::worker_process");
        ::fcntl(s_.in, F_SETFL, O_NONBLOCK);
        ++starts_;
    }

    std::vector<std::string> argv_;
    std::size_t capture_limit_;
    detail::spawned s_;
    std::string pending_;
    std::size_t starts_ = 0;
};

}  // namespace tensoracle::campaign
// ---- end tensoracle/campaign/process.hpp ----

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
// ---- end tensoracle/campaign/backend.hpp ----
// ---- begin tensoracle/campaign/campaign.hpp ----
// tensoracle: a differential campaign. Generated cases run on real backends in
// processes of their own, are compared with the kit's reference interpreter
// (and with a float64 re-evaluation for low-precision graphs) and with each
// other, classified, deduplicated by signature and summarised.
//
//   campaign_options o;  o.out = "camp"; o.count = 500;
//   std::vector<std::unique_ptr<backend>> b;  b.push_back(std::make_unique<command_backend>(...));
//   const auto s = run_campaign(o, std::move(b));   // camp/summary.json, summary.txt, cases/, results.jsonl
//
// Every case's result is appended (and flushed) to results.jsonl as soon as it is
// judged, so a campaign that is interrupted keeps its results and resumes: cases
// already in the journal are not run again, and the summary is rebuilt from it.
// Needs ONNX (libonnx, protobuf) and nlohmann/json, like io/case_files.hpp.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

// ---- begin tensoracle/campaign/corpus.hpp ----
// tensoracle: a campaign's corpus guided by what the systems rewrote.
//
// With `--guide rewrites` a campaign keeps the cases that brought something not
// seen before on a backend: a rewrite kind it reported (campaign/rewrites.hpp), a
// combination of its optimization kinds, an outcome other than a pass, a failure
// signature. Each later case is either generated afresh from (seed, index), a
// mutant of a corpus case (the mutation layer: semantics-preserving rewrites,
// dead code, resolution changes), or regrown around a corpus case's motifs (a new
// graph whose draws favour the motifs that case spliced). The parent is drawn with
// AFL-style energy: the rarer its features and the fewer children it has had, the
// more often it is picked.
//
// Determinism: cases run in rounds of `round` indices (of this process's shard).
// The corpus changes only between rounds, from the round's results taken in
// index order, so a case's derivation depends on the results of earlier rounds
// only, never on which job finished first: a campaign is deterministic per seed
// for any --jobs (given backends that are), and resumes by replaying its journal.
// A derived case records its parent and operations (results.jsonl, case.json);
// corpus cases are kept under DIR/corpus/<id>/ so that every derived case can be
// rebuilt from its parent. Shards keep corpora of their own (one per shard
// folder), which `tensoracle report` merges like any results.
// Needs ONNX (libonnx, protobuf) and nlohmann/json, like campaign.hpp.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::campaign {

/// Whether a campaign draws cases from a corpus guided by rewrites, or each afresh.
enum class guide_mode { none, rewrites };

[[nodiscard]] constexpr std::string_view to_string(guide_mode m) noexcept { return m == guide_mode::rewrites ? "rewrites" : "none"; }

[[nodiscard]] inline guide_mode guide_mode_from_string(std::string_view s) {
    if (s == "rewrites") return guide_mode::rewrites;
    if (s == "none") return guide_mode::none;
    throw error("tensoracle::campaign::guide_mode_from_string", "unknown guide '" + std::string(s) + "' (known: rewrites, none)");
}

struct guide_options {
    guide_mode mode = guide_mode::none;
    /// Cases per round: the corpus changes only between rounds (see the file comment).
    std::size_t round = 32;
    /// The least share of cases each way of making them gets (fresh, mutation,
    /// regrow): the shares follow what each found per case in the rounds so far
    /// (new features, smoothed), and none starves.
    double min_share = 0.1;
    std::size_t mutation_max_steps = 2;   ///< mutations per mutant: 1..this
    double motif_factor = 8.0;            ///< a regrown case draws its parent's motifs this many times as often
    double motif_probability = 0.6;       ///< and splices a motif at this share of its draws
    /// A parent of more nodes than this is drawn proportionally less often (its
    /// energy times parent_nodes / nodes), as AFL favours small inputs: each
    /// mutation adds nodes, and without it mutants of mutants grow from 24 to 47
    /// nodes over a 2,000-case ORT run, which halves the cases run per second.
    std::size_t parent_nodes = 24;

    void validate() const {
        const char* where = "tensoracle::campaign::guide_options";
        if (round == 0) throw error(where, "round must be at least 1 case");
        auto share = [&](double p, const char* what) {
            if (!(p >= 0.0 && p <= 1.0)) throw error(where, std::string(what) + " must be in [0, 1], got " + std::to_string(p));
        };
        if (!(min_share >= 0.0 && min_share <= 1.0 / 3.0)) throw error(where, "min_share must be in [0, 1/3], got " + std::to_string(min_share));
        share(motif_probability, "motif_probability");
        if (mutation_max_steps == 0 || mutation_max_steps > 16) throw error(where, "mutation_max_steps must be in 1..16");
        if (!(motif_factor >= 1.0)) throw error(where, "motif_factor must be at least 1");
        if (parent_nodes == 0) throw error(where, "parent_nodes must be at least 1");
    }
    /// campaign.json's "guide" (a resumed campaign must have the same).
    [[nodiscard]] nlohmann::json json() const {
        if (mode == guide_mode::none) return {{"mode", "none"}};
        return {{"mode", std::string(to_string(mode))}, {"round", round}, {"min_share", min_share}, {"mutation_max_steps", mutation_max_steps},
                {"motif_factor", motif_factor}, {"motif_probability", motif_probability}, {"parent_nodes", parent_nodes}};
    }
};

/// Whether an outcome (its results.jsonl name) means the backend produced outputs
/// that were compared: a rewrite it reported was then tested on values.
[[nodiscard]] inline bool outcome_ran(std::string_view outcome) noexcept {
    return outcome == "pass" || outcome == "mismatch" || outcome == "nan_inf" || outcome == "shape_dtype" ||
           outcome == "reference_precision" || outcome == "nondeterministic";
}

/// Whether some backend of a results.jsonl line produced outputs (see outcome_ran).
[[nodiscard]] inline bool some_backend_ran(const nlohmann::json& line) {
    const auto b = line.find("backends");
    if (b == line.end() || !b->is_object()) return false;
    return std::any_of(b->begin(), b->end(), [](const auto& r) { return outcome_ran(r.value("outcome", std::string("pass"))); });
}

/// What a guided corpus tracks in one results.jsonl line: per backend each rewrite
/// kind it reported ("onnxruntime|kind:Conv+Relu -> com.microsoft::FusedConv"), each
/// pair of its optimization kinds ("...|kinds:A&B"), its outcome
/// when not a pass ("...|outcome:crash"); and each failure signature ("sig:<id>").
/// A backend's rewrites count only when it ran the case (outcome_ran): a rewrite
/// reported by a session that then failed was reached but never tested on values,
/// so a later case that runs it is still new.
[[nodiscard]] inline std::vector<std::string> case_features(const nlohmann::json& line) {
    std::set<std::string> out;
    if (const auto b = line.find("backends"); b != line.end() && b->is_object()) {
        for (const auto& [name, r] : b->items()) {
            const auto outcome = r.value("outcome", std::string("pass"));
            if (outcome != "pass") out.insert(name + "|outcome:" + outcome);
            if (!outcome_ran(outcome)) continue;
            const auto rw = r.find("rewrites");
            if (rw == r.end() || !rw->is_array()) continue;
            std::set<std::string> optimizations;
            for (const auto& ev : *rw) {
                const auto kind = ev.value("kind", std::string());
                if (kind.empty()) continue;
                out.insert(name + "|kind:" + kind);
                const auto cls = ev.value("class", std::string());
                if (cls == "fusion" || cls == "elimination" || cls == "folding" || cls == "replacement") optimizations.insert(kind);
            }
            // Pairs, not whole sets: a case's whole set of kinds is nearly always new,
            // which would keep every case and guide nothing.
            for (auto a = optimizations.begin(); a != optimizations.end(); ++a) {
                for (auto z = std::next(a); z != optimizations.end(); ++z) out.insert(name + "|kinds:" + *a + "&" + *z);
            }
        }
    }
    if (const auto s = line.find("signatures"); s != line.end() && s->is_array()) {
        for (const auto& sig : *s) out.insert("sig:" + sig.value("id", std::string()));
    }
    return {out.begin(), out.end()};
}

/// How one case of a guided campaign is made.
struct derivation_plan {
    enum class kind { fresh, mutation, regrow };
    kind by = kind::fresh;
    std::size_t parent = 0;  ///< index into the corpus's entries
    std::uint64_t seed = 0;  ///< of the mutation chain
};

[[nodiscard]] constexpr std::string_view to_string(derivation_plan::kind k) noexcept {
    switch (k) {
        case derivation_plan::kind::fresh: return "fresh";
        case derivation_plan::kind::mutation: return "mutation";
        case derivation_plan::kind::regrow: return "regrow";
    }
    return "fresh";
}

/// One kept case.
struct corpus_entry {
    std::string id;
    std::uint64_t index = 0;
    std::vector<std::string> features;  ///< the features new when it was kept
    std::size_t children = 0;           ///< cases derived from it so far
    io::generated_case c;               ///< graph, inputs and motifs (no intermediate values)
};

/// The corpus of a guided campaign: see the file comment.
class rewrite_corpus {
public:
    explicit rewrite_corpus(guide_options o = {}) : o_(std::move(o)) { o_.validate(); }

    [[nodiscard]] const guide_options& options() const noexcept { return o_; }
    [[nodiscard]] const std::vector<corpus_entry>& entries() const noexcept { return entries_; }
    /// Cases that showed `feature` so far (absorbed rounds only).
    [[nodiscard]] std::size_t hits(const std::string& feature) const {
        const auto it = hits_.find(feature);
        return it == hits_.end() ? 0 : it->second;
    }
    /// Whether a line with these features could be kept at the end of its round.
    [[nodiscard]] bool novel(const std::vector<std::string>& features) const {
        return std::any_of(features.begin(), features.end(), [&](const auto& f) { return hits(f) == 0; });
    }

    /// Takes a finished round's lines (any order; taken by index): keeps each whose
    /// features hold one not seen before and that some backend ran, in index order,
    /// its case given by `load` (nullopt: not available, not kept). Counts every
    /// line's features and each derived line's parent. Returns the ids kept.
    /// A case no backend ran is not a parent (as AFL keeps crashing inputs out of
    /// its queue): its descendants inherit the failure; in a 2,000-case ORT run
    /// one AveragePool refusal kept as a parent spreads to 319 cases, 16% of the run.
    std::vector<std::string> absorb(std::vector<const nlohmann::json*> lines,
                                    const std::function<std::optional<io::generated_case>(const std::string&)>& load) {
        std::sort(lines.begin(), lines.end(), [](const auto* a, const auto* b) { return a->at("index").template get<std::uint64_t>() < b->at("index").template get<std::uint64_t>(); });
        std::vector<std::string> kept;
        for (const auto* l : lines) {
            const auto features = case_features(*l);
            auto by = derivation_plan::kind::fresh;
            if (const auto d = l->find("derivation"); d != l->end() && d->contains("parent")) {
                by = d->value("by", std::string()) == "regrow" ? derivation_plan::kind::regrow : derivation_plan::kind::mutation;
                if (const auto it = position_.find(d->at("parent").get<std::string>()); it != position_.end()) ++entries_[it->second].children;
            }
            std::vector<std::string> fresh;
            for (const auto& f : features) {
                if (hits(f) == 0) fresh.push_back(f);
            }
            for (const auto& f : features) ++hits_[f];
            auto& y = yield_[static_cast<std::size_t>(by)];
            ++y.cases;
            y.found += fresh.size();
            if (fresh.empty() || !some_backend_ran(*l)) continue;
            const auto id = l->at("case").get<std::string>();
            auto c = load(id);
            if (!c) continue;
            c->values.clear();
            c->outputs.clear();
            position_.emplace(id, entries_.size());
            entries_.push_back({id, l->at("index").get<std::uint64_t>(), std::move(fresh), 0, std::move(*c)});
            kept.push_back(id);
        }
        // Energies change only here: every plan of the next round reads them.
        energies_.clear();
        energy_total_ = 0.0;
        for (const auto& e : entries_) {
            energies_.push_back(energy(e));
            energy_total_ += energies_.back();
        }
        return kept;
    }

    /// An entry's weight as a parent: the rarer its features now, the more; halved
    /// as its children grow fourfold; scaled down past guide_options::parent_nodes.
    [[nodiscard]] double energy(const corpus_entry& e) const {
        double sum = 0.0;
        for (const auto& f : e.features) sum += 1.0 / static_cast<double>(std::max<std::size_t>(1, hits(f)));
        const auto nodes = e.c.model.nodes.size();
        const double size = nodes > o_.parent_nodes ? static_cast<double>(o_.parent_nodes) / static_cast<double>(nodes) : 1.0;
        return sum * size / std::sqrt(1.0 + static_cast<double>(e.children));
    }

    /// How case `index` of campaign `seed` is made: a pure function of the corpus
    /// (as of the round's start) and the case's id.
    [[nodiscard]] derivation_plan plan(std::uint64_t seed, std::uint64_t index) const {
        rng r(fnv1a(io::case_id(seed, index) + "/guide"));
        derivation_plan p;
        if (o_.mode == guide_mode::none || entries_.empty()) return p;
        const auto sh = shares();
        const double u = r.uniform();
        if (u < sh[0]) return p;
        const bool regrow = u >= sh[0] + sh[1];
        double x = r.uniform() * energy_total_;
        std::size_t k = 0;
        while (k + 1 < entries_.size() && x >= energies_[k]) x -= energies_[k++];
        p.parent = k;
        // A parent without motifs has nothing to regrow around: it is mutated.
        p.by = regrow && !entries_[k].c.motifs.empty() ? derivation_plan::kind::regrow : derivation_plan::kind::mutation;
        p.seed = r();
        return p;
    }

    /// The shares of fresh, mutation and regrow for the next round: each way's new
    /// features per case so far, smoothed ((found + 1) / (cases + 2)), normalised,
    /// then raised to min_share.
    [[nodiscard]] std::array<double, 3> shares() const {
        std::array<double, 3> w{};
        double total = 0.0;
        for (std::size_t k = 0; k < 3; ++k) {
            w[k] = (static_cast<double>(yield_[k].found) + 1.0) / (static_cast<double>(yield_[k].cases) + 2.0);
            total += w[k];
        }
        double raised = 0.0, rest = 0.0;
        for (auto& x : w) {
            x /= total;
            if (x < o_.min_share) {
                raised += o_.min_share;
                x = -1.0;  // fixed at the floor
            } else {
                rest += x;
            }
        }
        for (auto& x : w) x = x < 0.0 ? o_.min_share : x * (1.0 - raised) / rest;
        return w;
    }

    /// corpus.json: the kept cases, their new features and their children.
    [[nodiscard]] nlohmann::json json() const {
        nlohmann::json j{{"guide", o_.json()}, {"entries", nlohmann::json::array()}};
        const auto sh = shares();
        for (std::size_t k = 0; k < 3; ++k) {
            const auto name = std::string(to_string(static_cast<derivation_plan::kind>(k)));
            j["ways"][name] = {{"cases", yield_[k].cases}, {"new_features", yield_[k].found}, {"next_share", sh[k]}};
        }
        for (const auto& e : entries_) {
            nlohmann::json je{{"case", e.id}, {"index", e.index}, {"features", e.features}, {"children", e.children}, {"energy", energy(e)}};
            if (!e.c.derivation.is_null()) je["derivation"] = e.c.derivation;
            j["entries"].push_back(std::move(je));
        }
        return j;
    }

private:
    guide_options o_;
    std::vector<corpus_entry> entries_;
    std::map<std::string, std::size_t> position_;  ///< case id -> index into entries_
    std::vector<double> energies_;                 ///< energy(entries_[k]) as of the last absorb
    double energy_total_ = 0.0;
    std::map<std::string, std::size_t> hits_;
    struct yield {
        std::size_t cases = 0, found = 0;
    };
    std::array<yield, 3> yield_{};  ///< by derivation_plan::kind
};

/// The motif a spliced instance name stands for ("conv_bn/extra_consumer" -> "conv_bn").
[[nodiscard]] inline std::string motif_base_name(std::string_view instance) {
    return std::string(instance.substr(0, instance.find('/')));
}

/// Case `index` made by `p` from `corpus` (a derived case keeps its index and so
/// its id); nullopt when the derivation finds no place (no mutation applies, an
/// opset outside the mutation layer's, a mutant whose values do not run): the
/// caller generates afresh. `why` says what failed.
[[nodiscard]] inline std::optional<io::generated_case> derive_case(const gen::generator& gen, const rewrite_corpus& corpus, const derivation_plan& p,
                                                                   std::uint64_t seed, std::uint64_t index, gen::generation_stats& stats,
                                                                   std::string& why) {
    if (p.by == derivation_plan::kind::fresh) return std::nullopt;
    const auto& parent = corpus.entries().at(p.parent);
    const auto& o = corpus.options();
    if (p.by == derivation_plan::kind::regrow) {
        gen::growth_bias bias;
        for (const auto& m : parent.c.motifs) bias.motifs.insert(motif_base_name(m));
        bias.factor = o.motif_factor;
        bias.motif_probability = o.motif_probability;
        if (!gen.motifs().empty()) {
            auto c = io::make_case(gen, seed, index, stats, &bias);
            c.derivation = {{"by", "regrow"}, {"parent", parent.id}, {"motifs", std::vector<std::string>(bias.motifs.begin(), bias.motifs.end())}};
            return c;
        }
        // No motif in this config: mutate instead.
    }
    mutate::mutate_options mo;
    mo.steps = 1 + static_cast<std::size_t>(p.seed % o.mutation_max_steps);
    std::optional<mutate::mutant> m;
    try {
        m = mutate::mutate_graph(parent.c.model, parent.c.inputs, p.seed, mo);
    } catch (const std::exception& e) {
        why = std::string("mutation failed: ") + e.what();
        return std::nullopt;
    }
    if (!m) {
        why = "no mutation applies to " + parent.id;
        return std::nullopt;
    }
    io::generated_case c;
    c.seed = seed;
    c.index = index;
    c.config_hash = parent.c.config_hash;
    c.model = std::move(m->model);
    c.inputs = std::move(m->inputs);
    for (const auto& n : c.model.nodes) c.op_types.push_back(n.op_type);
    c.motifs = parent.c.motifs;
    c.search.success = true;
    try {
        c.values = graph::run(c.model, c.inputs, {.record_intermediates = true}).values;
    } catch (const std::exception& e) {
        why = std::string("the mutant does not run: ") + e.what();
        return std::nullopt;
    }
    for (const auto& [name, t] : c.model.initializers) c.values.insert_or_assign(name, t);
    for (const auto& [name, t] : c.inputs) c.values.insert_or_assign(name, t);
    for (const auto& out : c.model.outputs) c.outputs.emplace(out.name, c.values.at(out.name));
    c.derivation = {{"by", "mutation"}, {"parent", parent.id}, {"chain", m->chain_text()}, {"seed", p.seed}, {"steps", mo.steps}};
    return c;
}

/// A case folder written by io::write_case (model.onnx, test_data_set_0/input_<k>.pb,
/// case.json), read back as a corpus entry's case (graph, inputs, motifs).
[[nodiscard]] inline io::generated_case read_corpus_case(const std::filesystem::path& folder) {
    const std::string where = "tensoracle::campaign::read_corpus_case(" + folder.string() + ")";
    io::generated_case c;
    c.model = io::load_model(folder / "model.onnx");
    for (std::size_t k = 0; k < c.model.inputs.size(); ++k) {
        const auto file = folder / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb");
        if (!std::filesystem::exists(file)) throw error(where, "no " + file.filename().string() + " for graph input '" + c.model.inputs[k].name + "'");
        c.inputs.emplace(c.model.inputs[k].name, io::load_tensor(file));
    }
    std::ifstream f(folder / "case.json");
    if (!f) throw error(where, "no case.json");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(f);
    } catch (const std::exception& e) {
        throw error(where, std::string("case.json is not readable JSON: ") + e.what());
    }
    c.seed = j.value("seed", std::uint64_t{0});
    c.index = j.value("index", std::uint64_t{0});
    c.config_hash = j.value("config_hash", std::string());
    c.motifs = j.value("motifs", std::vector<std::string>{});
    c.op_types = j.value("ops", std::vector<std::string>{});
    if (j.contains("derivation")) c.derivation = j["derivation"];
    return c;
}

}  // namespace tensoracle::campaign
// ---- end tensoracle/campaign/corpus.hpp ----
// ---- begin tensoracle/campaign/rewrites.hpp ----
// tensoracle: what a system under test did with a case's graph, as rewrite events.
//
// A backend may report the graph it executed (docs/BACKENDS.md, "Rewrite
// feedback"): an ONNX file `rewritten.onnx` in its outputs folder (ONNX
// Runtime's optimizedModelFilePath), or `rewrites.json` naming the events
// itself (systems whose executed graph is not ONNX). Comparing the case's graph
// with the executed one gives events a person can check by opening both:
// which original nodes vanished, which executed nodes appeared, grouped by the
// tensors they share, and named by kind ("Conv+Relu -> com.microsoft::FusedConv",
// "Identity eliminated", "constant folding: Add"). Tool-independent: nothing
// here knows a rule of any system.
// Needs ONNX (libonnx, protobuf) and nlohmann/json, like campaign/backend.hpp.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>


namespace tensoracle::campaign {

/// One node as a system executed it: enough to match it with the case's nodes.
struct executed_node {
    std::string domain;  ///< "" for the default ONNX domain
    std::string op_type;
    std::vector<std::string> inputs, outputs;
    /// Attribute name -> its serialized AttributeProto: equal text, equal attribute.
    std::map<std::string, std::string> attributes;

    /// "Conv", or "com.microsoft::FusedConv" outside the default domain.
    [[nodiscard]] std::string qualified_op() const { return domain.empty() ? op_type : domain + "::" + op_type; }
};

/// A graph as executed: nodes, and the names of the constants it holds.
struct executed_graph {
    std::vector<executed_node> nodes;
    std::set<std::string> initializers;
};

/// What kind of change an event is. Fusions, eliminations, foldings and
/// replacements are what a compiler rewrites; insertions (a Cast around a
/// float16 island), layout changes and expanded function bodies are counted
/// apart, as they are how a system runs an op rather than an optimization.
enum class rewrite_class { fusion, elimination, folding, replacement, layout, insertion, expansion };

[[nodiscard]] constexpr std::string_view to_string(rewrite_class c) noexcept {
    switch (c) {
        case rewrite_class::fusion: return "fusion";
        case rewrite_class::elimination: return "elimination";
        case rewrite_class::folding: return "folding";
        case rewrite_class::replacement: return "replacement";
        case rewrite_class::layout: return "layout";
        case rewrite_class::insertion: return "insertion";
        case rewrite_class::expansion: return "expansion";
    }
    return "unknown";
}

/// The class a name (to_string's) stands for; empty for a name that is none.
[[nodiscard]] constexpr std::optional<rewrite_class> rewrite_class_named(std::string_view name) noexcept {
    for (const auto c : {rewrite_class::fusion, rewrite_class::elimination, rewrite_class::folding, rewrite_class::replacement,
                         rewrite_class::layout, rewrite_class::insertion, rewrite_class::expansion}) {
        if (name == to_string(c)) return c;
    }
    return std::nullopt;
}

/// Whether an event of this class is an optimization (what rewrite reach counts).
[[nodiscard]] constexpr bool is_optimization(rewrite_class c) noexcept {
    return c == rewrite_class::fusion || c == rewrite_class::elimination || c == rewrite_class::folding ||
           c == rewrite_class::replacement;
}

/// One rewrite: original nodes that vanished or changed, executed nodes that appeared.
struct rewrite_event {
    rewrite_class what = rewrite_class::fusion;
    std::string kind;                       ///< "Conv+Relu -> com.microsoft::FusedConv"
    std::vector<std::size_t> original;      ///< indices into the case's nodes (vanished or changed)
    std::vector<std::size_t> executed;      ///< indices into the executed nodes (appeared or changed)

    [[nodiscard]] nlohmann::json json() const { return {{"kind", kind}, {"class", to_string(what)}}; }
};

namespace detail {

[[nodiscard]] inline std::string normalized_domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

[[nodiscard]] inline executed_node executed_from_proto(const onnx::NodeProto& np) {
    executed_node n;
    n.domain = normalized_domain(np.domain());
    n.op_type = np.op_type();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (const auto& a : np.attribute()) {
        onnx::AttributeProto copy = a;
        copy.clear_doc_string();
        n.attributes.emplace(a.name(), copy.SerializeAsString());
    }
    return n;
}

}  // namespace detail

/// The case's graph in the form executed graphs are read in (attributes serialized
/// as io/onnx.hpp writes them, so an attribute a system left alone compares equal).
[[nodiscard]] inline executed_graph as_executed(const graph::graph& g) {
    const auto proto = io::to_model_proto(g);
    executed_graph out;
    for (const auto& np : proto.graph().node()) out.nodes.push_back(detail::executed_from_proto(np));
    for (const auto& [name, t] : g.initializers) out.initializers.insert(name);
    return out;
}

/// Reads an executed graph written as ONNX (`rewritten.onnx`). Node structure only:
/// initializer data is not decoded. Throws naming the file when it is not ONNX.
[[nodiscard]] inline executed_graph read_executed_onnx(const std::filesystem::path& path) {
    const std::string where = "tensoracle::campaign::read_executed_onnx(" + path.string() + ")";
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(where, "cannot open the file");
    onnx::ModelProto m;
    if (!m.ParseFromIstream(&in)) throw error(where, "not a valid ONNX model (protobuf parse failed)");
    executed_graph out;
    for (const auto& np : m.graph().node()) out.nodes.push_back(detail::executed_from_proto(np));
    for (const auto& t : m.graph().initializer()) out.initializers.insert(t.name());
    // Attributes written by another serializer (ORT's) may order fields otherwise:
    // round-trip the ones the kit reads, so equal attributes give equal text.
    for (auto& n : out.nodes) {
        for (auto& [name, text] : n.attributes) {
            onnx::AttributeProto a;
            if (!a.ParseFromString(text)) continue;
            try {
                const auto v = io::detail::from_attribute(a, path.parent_path(), where);
                onnx::AttributeProto b;
                io::detail::to_attribute(name, v, b);
                text = b.SerializeAsString();
            } catch (const std::exception&) {
                // A kind the kit does not read (a graph, a sparse tensor): compared as written.
            }
        }
    }
    return out;
}

namespace detail {

/// Union-find over event members.
struct components {
    std::vector<std::size_t> parent;
    explicit components(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), std::size_t{0}); }
    std::size_t find(std::size_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    }
    void join(std::size_t a, std::size_t b) { parent[find(a)] = find(b); }
};

[[nodiscard]] inline bool shares_name(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    for (const auto& x : a) {
        if (!x.empty() && std::find(b.begin(), b.end(), x) != b.end()) return true;
    }
    return false;
}

/// "A+B+A": op names in order, with multiplicity (a pattern's shape), or sorted and
/// unique ("Add, Mul": what a folding or elimination removed, whatever its order).
[[nodiscard]] inline std::string op_list(const std::vector<std::string>& ops, bool as_set) {
    std::vector<std::string> v = ops;
    if (as_set) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    std::string s;
    for (const auto& o : v) s += (s.empty() ? "" : as_set ? ", " : "+") + o;
    return s;
}

}  // namespace detail

/// The rewrite events that turn `original` into `executed`.
///
/// Nodes are matched by op and domain, first on equal outputs, then on equal inputs,
/// then on any shared tensor name; a matched node whose attributes changed, or that
/// reads a constant the case does not have (a folded weight), is *changed*. Vanished
/// (unmatched original), appeared (unmatched executed) and changed nodes are grouped
/// by the tensors they share: original edges between vanished nodes, executed edges
/// between appeared ones, a shared output between a vanished and an appeared node (a
/// fused node keeps its pattern's last output name), edges between a changed node and
/// a vanished one. An appeared node that shares no output with a vanished one joins
/// those whose inputs it reads. Each group with a vanished or appeared node is one event.
[[nodiscard]] inline std::vector<rewrite_event> rewrite_events(const executed_graph& original, const executed_graph& executed_as_is) {
    const auto& on = original.nodes;
    std::set<std::string> original_names(original.initializers.begin(), original.initializers.end());
    for (const auto& n : on) {
        original_names.insert(n.inputs.begin(), n.inputs.end());
        original_names.insert(n.outputs.begin(), n.outputs.end());
    }
    // A Cast the system inserted (one side a name the case does not have: a float16
    // island run in float32) renames what it converts: the nodes between such Casts
    // are matched under the original names, and the Casts stay insertions.
    executed_graph renamed = executed_as_is;
    {
        std::map<std::string, std::string> alias;
        for (const auto& n : executed_as_is.nodes) {
            if (n.op_type != "Cast" || !n.domain.empty() || n.inputs.size() != 1 || n.outputs.size() != 1) continue;
            const bool in_known = original_names.count(n.inputs[0]) != 0, out_known = original_names.count(n.outputs[0]) != 0;
            if (in_known && !out_known) alias.emplace(n.outputs[0], n.inputs[0]);
            if (!in_known && out_known) alias.emplace(n.inputs[0], n.outputs[0]);
        }
        auto resolve = [&](std::string name) {
            for (int hops = 0; hops < 8; ++hops) {
                const auto it = alias.find(name);
                if (it == alias.end()) break;
                name = it->second;
            }
            return name;
        };
        for (auto& n : renamed.nodes) {
            const bool renaming_cast = n.op_type == "Cast" && n.domain.empty() && n.inputs.size() == 1 && n.outputs.size() == 1 &&
                                       (alias.count(n.outputs[0]) != 0 || alias.count(n.inputs[0]) != 0);
            if (renaming_cast) continue;
            for (auto& x : n.inputs) x = resolve(x);
            for (auto& x : n.outputs) x = resolve(x);
        }
    }
    const auto& executed = renamed;
    const auto& en = executed.nodes;
    // --- matching ---
    std::vector<long> match_of_original(on.size(), -1), match_of_executed(en.size(), -1);
    auto same_op = [&](std::size_t i, std::size_t j) { return on[i].op_type == en[j].op_type && on[i].domain == en[j].domain; };
    auto match_pass = [&](auto&& fits) {
        for (std::size_t j = 0; j < en.size(); ++j) {
            if (match_of_executed[j] >= 0) continue;
            for (std::size_t i = 0; i < on.size(); ++i) {
                if (match_of_original[i] >= 0 || !same_op(i, j) || !fits(on[i], en[j])) continue;
                match_of_original[i] = static_cast<long>(j);
                match_of_executed[j] = static_cast<long>(i);
                break;
            }
        }
    };
    match_pass([](const executed_node& a, const executed_node& b) { return a.outputs == b.outputs; });
    match_pass([](const executed_node& a, const executed_node& b) { return a.inputs == b.inputs; });
    match_pass([](const executed_node& a, const executed_node& b) {
        return detail::shares_name(a.outputs, b.outputs) || detail::shares_name(a.inputs, b.inputs);
    });
    // By structure, for what a system renamed wholesale (ORT runs a float16 island in
    // float32 under names of its own, its constants converted): same op, and each input
    // comes from the match of the original input's producer, or both from outside the
    // nodes (an equal graph input, or constants), looking through Casts nobody matched.
    {
        std::map<std::string, std::pair<std::size_t, std::size_t>> original_producer, executed_producer;  // name -> (node, output)
        for (std::size_t i = 0; i < on.size(); ++i) {
            for (std::size_t k = 0; k < on[i].outputs.size(); ++k) original_producer.emplace(on[i].outputs[k], std::pair{i, k});
        }
        for (std::size_t j = 0; j < en.size(); ++j) {
            for (std::size_t k = 0; k < en[j].outputs.size(); ++k) executed_producer.emplace(en[j].outputs[k], std::pair{j, k});
        }
        auto through_casts = [&](std::string name) {
            for (int hops = 0; hops < 8; ++hops) {
                const auto it = executed_producer.find(name);
                if (it == executed_producer.end()) break;
                const auto& c = en[it->second.first];
                if (c.op_type != "Cast" || !c.domain.empty() || match_of_executed[it->second.first] >= 0 || c.inputs.size() != 1) break;
                name = c.inputs[0];
            }
            return name;
        };
        auto same_source = [&](const std::string& original_input, const std::string& executed_input) {
            if (original_input.empty() || executed_input.empty()) return original_input.empty() && executed_input.empty();
            const auto e = through_casts(executed_input);
            const auto ep = executed_producer.find(e);
            const auto op = original_producer.find(original_input);
            if (ep != executed_producer.end()) {
                const auto m = match_of_executed[ep->second.first];
                return m >= 0 && op != original_producer.end() && op->second.first == static_cast<std::size_t>(m) &&
                       op->second.second == ep->second.second;
            }
            if (op != original_producer.end()) return false;
            const bool e_constant = executed.initializers.count(e) != 0, o_constant = original.initializers.count(original_input) != 0;
            return e_constant ? o_constant : e == original_input;
        };
        match_pass([&](const executed_node& a, const executed_node& b) {
            if (a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size()) return false;
            for (std::size_t k = 0; k < a.inputs.size(); ++k) {
                if (!same_source(a.inputs[k], b.inputs[k])) return false;
            }
            return true;
        });
    }
    // A Cast nobody matched is an insertion of its own (it joins no event), unless it
    // took the place of a vanished node, reading its input and writing its output
    // (CastLike expanded into a Cast).
    std::vector<char> inserted_cast(en.size(), 0);
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (en[j].op_type != "Cast" || !en[j].domain.empty() || match_of_executed[j] >= 0) continue;
        bool replaces = false;
        for (std::size_t i = 0; i < on.size() && !replaces; ++i) {
            replaces = match_of_original[i] < 0 && on[i].op_type != "Cast" && detail::shares_name(on[i].outputs, en[j].outputs) &&
                       detail::shares_name(en[j].inputs, on[i].inputs);
        }
        inserted_cast[j] = replaces ? 0 : 1;
    }
    std::vector<char> changed(en.size(), 0);
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (match_of_executed[j] < 0) continue;
        const auto& o = on[static_cast<std::size_t>(match_of_executed[j])];
        bool c = o.attributes != en[j].attributes;
        for (const auto& in : en[j].inputs) {
            // A constant the case did not have: a weight folded into this node.
            c = c || (!in.empty() && original_names.count(in) == 0 && executed.initializers.count(in) != 0);
        }
        changed[j] = c ? 1 : 0;
    }
    // --- grouping: members 0..on.size()-1 are original nodes, then executed ones ---
    const std::size_t off = on.size();
    detail::components u(on.size() + en.size());
    auto vanished = [&](std::size_t i) { return match_of_original[i] < 0; };
    // An inserted Cast is an event of its own: it joins nothing.
    auto appeared = [&](std::size_t j) { return match_of_executed[j] < 0 && !inserted_cast[j]; };
    for (std::size_t a = 0; a < on.size(); ++a) {
        if (!vanished(a)) continue;
        for (std::size_t b = 0; b < on.size(); ++b) {
            if (b != a && vanished(b) && detail::shares_name(on[a].outputs, on[b].inputs)) u.join(a, b);
        }
        for (std::size_t j = 0; j < en.size(); ++j) {
            if (appeared(j) && detail::shares_name(on[a].outputs, en[j].outputs)) u.join(a, off + j);
            if (!changed[j]) continue;
            const auto& m = on[static_cast<std::size_t>(match_of_executed[j])];
            if (detail::shares_name(on[a].outputs, m.inputs) || detail::shares_name(m.outputs, on[a].inputs) ||
                detail::shares_name(on[a].outputs, en[j].outputs)) {
                u.join(a, off + j);
            }
        }
    }
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (!appeared(j)) continue;
        for (std::size_t k = 0; k < en.size(); ++k) {
            if (k != j && appeared(k) && detail::shares_name(en[j].outputs, en[k].inputs)) u.join(off + j, off + k);
        }
    }
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (!appeared(j)) continue;
        bool tied = false;
        for (std::size_t a = 0; a < on.size() && !tied; ++a) tied = vanished(a) && u.find(a) == u.find(off + j);
        if (tied) continue;
        for (std::size_t a = 0; a < on.size(); ++a) {
            if (vanished(a) && detail::shares_name(on[a].inputs, en[j].inputs)) u.join(a, off + j);
        }
    }
    // --- events, in the order of their first member ---
    std::map<std::size_t, rewrite_event> by_root;
    std::vector<std::size_t> order;
    auto event_of = [&](std::size_t member) -> rewrite_event& {
        const auto r = u.find(member);
        auto [it, fresh] = by_root.try_emplace(r);
        if (fresh) order.push_back(r);
        return it->second;
    };
    for (std::size_t i = 0; i < on.size(); ++i) {
        if (vanished(i)) event_of(i).original.push_back(i);
    }
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (appeared(j) || (inserted_cast[j] && match_of_executed[j] < 0)) event_of(off + j).executed.push_back(j);
    }
    // Changed nodes join an event only through a vanished neighbour.
    for (std::size_t j = 0; j < en.size(); ++j) {
        if (!changed[j]) continue;
        const auto it = by_root.find(u.find(off + j));
        if (it == by_root.end()) continue;
        it->second.original.push_back(static_cast<std::size_t>(match_of_executed[j]));
        it->second.executed.push_back(j);
    }
    std::vector<rewrite_event> events;
    for (const auto r : order) {
        auto e = std::move(by_root.at(r));
        std::sort(e.original.begin(), e.original.end());
        std::sort(e.executed.begin(), e.executed.end());
        std::vector<std::string> gone, kept_changed, came;
        bool folded = false, layout = false, default_domain_only = true;
        for (const auto i : e.original) {
            const auto q = on[i].qualified_op();
            (vanished(i) ? gone : kept_changed).push_back(q);
            if (vanished(i)) {
                for (const auto& o : on[i].outputs) folded = folded || executed.initializers.count(o) != 0;
            }
        }
        std::vector<std::string> all_original;
        for (const auto i : e.original) all_original.push_back(on[i].qualified_op());
        for (const auto j : e.executed) {
            if (match_of_executed[j] >= 0) continue;  // a changed node, not an appeared one
            came.push_back(en[j].qualified_op());
            layout = layout || en[j].domain == "com.microsoft.nchwc";
            default_domain_only = default_domain_only && en[j].domain.empty();
        }
        // A vanished op and an equal appeared one in one event are the same node,
        // renamed: only what differs is the rewrite.
        for (auto it = gone.begin(); it != gone.end();) {
            const auto c = std::find(came.begin(), came.end(), *it);
            if (c == came.end()) {
                ++it;
                continue;
            }
            came.erase(c);
            const auto a = std::find(all_original.begin(), all_original.end(), *it);
            if (a != all_original.end()) all_original.erase(a);
            it = gone.erase(it);
        }
        if (gone.empty() && came.empty()) continue;  // renamed only
        if (gone.empty()) {
            e.what = layout ? rewrite_class::layout : rewrite_class::insertion;
            e.kind = detail::op_list(came, true) + " inserted";
        } else if (came.empty() && kept_changed.empty()) {
            e.what = folded ? rewrite_class::folding : rewrite_class::elimination;
            e.kind = folded ? "constant folding: " + detail::op_list(gone, true) : detail::op_list(gone, true) + " eliminated";
            // One node gone whose twin (same op, inputs, attributes) stayed: common subexpression elimination.
            bool twin = false;
            for (const auto i : e.original) {
                if (!vanished(i)) continue;
                for (std::size_t t = 0; t < on.size() && !twin; ++t) {
                    twin = t != i && !vanished(t) && on[t].qualified_op() == on[i].qualified_op() && on[t].inputs == on[i].inputs &&
                           on[t].attributes == on[i].attributes;
                }
            }
            if (twin && !folded) e.kind = "common subexpression: " + detail::op_list(gone, true);
        } else if (came.empty()) {
            e.what = rewrite_class::fusion;
            e.kind = detail::op_list(all_original, false) + " -> " + detail::op_list(kept_changed, false);
        } else if (gone.size() == 1 && kept_changed.empty() && layout) {
            e.what = rewrite_class::layout;
            e.kind = detail::op_list(gone, false) + " -> " + detail::op_list(came, false);
        } else if (gone.size() == 1 && kept_changed.empty()) {
            // One op became others of the default domain: its function body, expanded
            // (LeakyRelu as Mul, Less and Where; CastLike as Cast).
            e.what = default_domain_only ? rewrite_class::expansion : rewrite_class::replacement;
            e.kind = detail::op_list(gone, false) + " -> " + detail::op_list(came, false);
        } else {
            e.what = rewrite_class::fusion;
            e.kind = detail::op_list(all_original, false) + " -> " + detail::op_list(came, false);
        }
        events.push_back(std::move(e));
    }
    return events;
}

/// Reads what a backend reported in its outputs folder: `rewritten.onnx` (compared
/// with `original`) or `rewrites.json` ({"events": [{"kind": ..., "class": ...}]},
/// events the backend names itself). Empty when it reported nothing. A report that
/// cannot be read is an event of its own kind ("unreadable rewrite report: ..."),
/// so a broken report is seen, not mistaken for a graph left alone.
[[nodiscard]] inline std::optional<std::vector<rewrite_event>> reported_rewrites(const graph::graph& original,
                                                                                const std::filesystem::path& outputs) {
    std::error_code ec;
    const auto onnx_file = outputs / "rewritten.onnx", json_file = outputs / "rewrites.json";
    auto unreadable = [](const std::string& why) {
        rewrite_event e;
        e.what = rewrite_class::insertion;
        e.kind = "unreadable rewrite report: " + why;
        return std::vector<rewrite_event>{e};
    };
    if (std::filesystem::exists(onnx_file, ec)) {
        try {
            return rewrite_events(as_executed(original), read_executed_onnx(onnx_file));
        } catch (const std::exception& e) {
            return unreadable(e.what());
        }
    }
    if (std::filesystem::exists(json_file, ec)) {
        try {
            std::ifstream in(json_file);
            const auto j = nlohmann::json::parse(in);
            std::vector<rewrite_event> out;
            for (const auto& je : j.at("events")) {
                rewrite_event e;
                e.kind = je.at("kind").get<std::string>();
                const auto c = je.value("class", std::string("fusion"));
                const auto what = rewrite_class_named(c);
                if (!what) throw error("tensoracle::campaign::reported_rewrites", "event class '" + c + "' is not one of fusion, elimination, folding, replacement, layout, insertion, expansion");
                e.what = *what;
                out.push_back(std::move(e));
            }
            return out;
        } catch (const std::exception& e) {
            return unreadable(json_file.filename().string() + ": " + e.what());
        }
    }
    return std::nullopt;
}

}  // namespace tensoracle::campaign
// ---- end tensoracle/campaign/rewrites.hpp ----
// ---- begin tensoracle/campaign/triage.hpp ----
// tensoracle: triage of a campaign's signatures, new and real first.
//
// A signature is `known` when a confirmed finding has it (the findings the kit
// keeps as reproducers under tests/data/findings*/<name>/expected.json, or a
// user's file), a `limitation` when it is a system refusing a valid model
// (compile failures: what it does not support), and `new` otherwise. Summaries
// list new wrong results first, then new crashes and other failures, then
// known ones, then limitations, so what a person should look at comes first.
// Needs nlohmann/json, like campaign/campaign.hpp.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>


namespace tensoracle::campaign {

/// Confirmed findings by signature id: the finding's name (its folder) or label,
/// and the verdict of a judged discrepancy that is no fault of the system.
struct known_findings {
    std::map<std::string, std::string> by_signature;
    /// Signatures judged "precision" or "specification gap" (docs/FINDINGS.md): no one's
    /// bug, so a campaign labels them `judged`, not `known`. Absent: a confirmed finding.
    std::map<std::string, std::string> verdict_by_signature;

    /// The verdicts a judged signature may carry; "bug" and "limitation" are confirmed findings.
    static constexpr std::array<std::string_view, 4> verdicts{"bug", "limitation", "precision", "specification gap"};

    /// Adds `path`: a folder holding finding folders (each with an expected.json that
    /// names its "signature", or its "signatures" as a list), a folder of such folders, one finding folder, or a JSON
    /// file: {"<signature id>": "<name>", ...} or [{"signature": ..., "name": ..., "verdict": ...}]
    /// (verdict one of `verdicts`; "precision" and "specification gap" label it judged).
    /// Throws naming the path when it holds none of these.
    void add(const std::filesystem::path& path) {
        const std::string where = "tensoracle::campaign::known_findings(" + path.string() + ")";
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) {
            std::size_t found = 0;
            for (std::filesystem::recursive_directory_iterator it(path, ec), end; it != end; it.increment(ec)) {
                if (ec) break;
                if (it.depth() > 2) {
                    it.disable_recursion_pending();
                    continue;
                }
                if (it->path().filename() != "expected.json") continue;
                const auto j = read(it->path(), where);
                if (!j.is_object()) continue;
                // "signature": one id; "signatures": a list (one per configuration the finding shows in).
                std::vector<std::string> ids;
                if (j.contains("signature") && j["signature"].is_string()) ids.push_back(j["signature"].get<std::string>());
                if (j.contains("signatures") && j["signatures"].is_array()) {
                    for (const auto& id : j["signatures"]) {
                        if (id.is_string()) ids.push_back(id.get<std::string>());
                    }
                }
                for (const auto& id : ids) by_signature.emplace(id, it->path().parent_path().filename().string());
                found += ids.empty() ? 0 : 1;
            }
            if (found == 0) throw error(where, "no finding folder (one holding an expected.json with a \"signature\" or \"signatures\") below this folder");
            return;
        }
        const auto j = read(path, where);
        if (j.is_object()) {
            for (const auto& [id, name] : j.items()) {
                if (!name.is_string()) throw error(where, "the finding of signature " + id + " is not a name (a string)");
                by_signature.emplace(id, name.get<std::string>());
            }
            return;
        }
        if (!j.is_array()) throw error(where, "expected an object {signature: name} or a list of {\"signature\", \"name\"}");
        for (const auto& e : j) {
            if (!e.is_object() || !e.contains("signature") || !e["signature"].is_string()) {
                throw error(where, "a list entry has no \"signature\" string: " + e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
            }
            const auto id = e["signature"].get<std::string>();
            by_signature.emplace(id, e.value("name", id));
            if (const auto v = e.find("verdict"); v != e.end()) {
                const std::string verdict = v->is_string() ? v->get<std::string>() : v->dump();
                if (std::find(verdicts.begin(), verdicts.end(), verdict) == verdicts.end()) {
                    throw error(where, "signature " + id + ": unknown verdict '" + verdict + "' (known: bug, limitation, precision, specification gap)");
                }
                if (verdict == "precision" || verdict == "specification gap") verdict_by_signature.emplace(id, verdict);
            }
        }
    }
    /// Whether `id` was judged no fault of the system (precision, a specification gap).
    [[nodiscard]] bool judged_not_a_bug(const std::string& id) const { return verdict_by_signature.count(id) != 0; }

    [[nodiscard]] nlohmann::json json() const { return by_signature; }

private:
    static nlohmann::json read(const std::filesystem::path& p, const std::string& where) {
        std::ifstream in(p);
        if (!in) throw error(where, "cannot open " + p.string());
        try {
            return nlohmann::json::parse(in);
        } catch (const nlohmann::json::exception& e) {
            throw error(where, p.string() + " is not JSON: " + e.what());
        }
    }
};

/// A summary signature's label: "new", "known" (a confirmed finding), "judged" (judged
/// no fault: precision, a specification gap) or "limitation" (a valid model a system
/// refuses in every configuration the campaign runs).
[[nodiscard]] inline std::string triage_label(const nlohmann::json& sig, const known_findings& known) {
    const auto id = sig.value("id", std::string());
    if (known.judged_not_a_bug(id)) return "judged";
    if (known.by_signature.count(id) != 0) return "known";
    const auto outcome = sig.value("outcome", std::string());
    // What another configuration of the same system runs is no limitation of the system
    // (campaign.hpp's pair comparison words such a failure "..., but <other> runs it").
    const auto where = sig.value("where", std::string());
    const bool sibling_runs = where.rfind("unsupported here, but ", 0) == 0 || where.rfind("fails to load, but ", 0) == 0;
    if ((outcome == "compile_failure" || outcome == "unsupported") && !sibling_runs) return "limitation";
    return "new";
}

/// Where a labelled signature goes in a summary: new wrong results (mismatch, NaN/Inf,
/// shape or dtype, non-determinism) 0, other new failures (crash, hang, run-time
/// error, bad output) 1, known 2, judged 3, limitations 4.
[[nodiscard]] inline int triage_rank(const nlohmann::json& sig) {
    const auto label = sig.value("triage", std::string("new"));
    if (label == "known") return 2;
    if (label == "judged") return 3;
    if (label == "limitation") return 4;
    const auto outcome = sig.value("outcome", std::string());
    const bool wrong = outcome == "mismatch" || outcome == "nan_inf" || outcome == "shape_dtype" || outcome == "nondeterministic";
    return wrong ? 0 : 1;
}

}  // namespace tensoracle::campaign
// ---- end tensoracle/campaign/triage.hpp ----

namespace tensoracle::campaign {

/// The class of one backend's result on one case (snake_case in every file).
enum class outcome_class {
    pass,
    mismatch,             ///< finite values beyond the tolerance level
    nan_inf,              ///< NaN/Inf at other positions
    shape_dtype,          ///< an output of another shape or element type
    unsupported,          ///< the backend lacks something, by its own evidence
    compile_failure,      ///< did not load/compile (or: unsupported here while another backend runs it)
    runtime_error,
    crash,
    hang,
    nondeterministic,     ///< a mismatch the backend did not repeat on a second run
    bad_output,           ///< exited 0 with outputs that break the protocol
    reference_precision,  ///< disagrees with our same-dtype reference, but is as close to float64 truth
};

inline constexpr outcome_class all_outcomes[] = {
    outcome_class::pass,          outcome_class::mismatch,        outcome_class::nan_inf,
    outcome_class::shape_dtype,   outcome_class::unsupported,     outcome_class::compile_failure,
    outcome_class::runtime_error, outcome_class::crash,           outcome_class::hang,
    outcome_class::nondeterministic, outcome_class::bad_output,   outcome_class::reference_precision,
};

[[nodiscard]] constexpr std::string_view to_string(outcome_class c) noexcept {
    switch (c) {
        case outcome_class::pass: return "pass";
        case outcome_class::mismatch: return "mismatch";
        case outcome_class::nan_inf: return "nan_inf";
        case outcome_class::shape_dtype: return "shape_dtype";
        case outcome_class::unsupported: return "unsupported";
        case outcome_class::compile_failure: return "compile_failure";
        case outcome_class::runtime_error: return "runtime_error";
        case outcome_class::crash: return "crash";
        case outcome_class::hang: return "hang";
        case outcome_class::nondeterministic: return "nondeterministic";
        case outcome_class::bad_output: return "bad_output";
        case outcome_class::reference_precision: return "reference_precision";
    }
    return "unknown";
}

/// Failures get signatures; a pass, an unsupported case or a reference-precision label do not.
[[nodiscard]] constexpr bool is_failure(outcome_class c) noexcept {
    return c != outcome_class::pass && c != outcome_class::unsupported && c != outcome_class::reference_precision;
}

/// GraphNet's error code: 1 accuracy, 2 runtime crash, 3 compile failure (0: none).
[[nodiscard]] constexpr int graphnet_error_code(outcome_class c) noexcept {
    switch (c) {
        case outcome_class::mismatch:
        case outcome_class::nan_inf:
        case outcome_class::shape_dtype:
        case outcome_class::nondeterministic: return 1;
        case outcome_class::runtime_error:
        case outcome_class::crash:
        case outcome_class::hang:
        case outcome_class::bad_output: return 2;
        case outcome_class::compile_failure: return 3;
        default: return 0;
    }
}

/// What judging one case compares, and how (a campaign's comparison settings).
struct judge_options {
    double level = -4.0;
    double timeout_seconds = 10.0;
    bool float64_oracle = true, recheck = true, localize = true, compare_backends = true;
};

struct campaign_options {
    gen::config config;
    std::uint64_t seed = 0, first = 0, count = 100;
    /// GraphNet tolerance level of every value comparison. At -4 an f32 output
    /// passes |a - e| <= 1e-4 + 1.96e-5 |e|, an f64 one 2.5e-6 + 2.5e-6 |e|: a 1%
    /// relative error on an output of magnitude 0.02 or more is a mismatch.
    double level = -4.0;
    double timeout_seconds = 10.0;
    double time_limit_seconds = 0.0;  ///< stop starting cases after this (0: none)
    unsigned jobs = 1;
    std::filesystem::path out;
    bool float64_oracle = true;    ///< re-evaluate f16/bf16/f32 graphs in float64 to label reference imprecision
    bool recheck = true;           ///< run a mismatch again to spot non-determinism, a time-out again (twice the limit) to confirm a hang
    bool localize = true;          ///< mark every intermediate as an output to find the first disagreeing node
    /// Configurations of one system (names equal up to the first '-': onnxruntime and
    /// onnxruntime-noopt) compared with each other, on outcomes and values.
    bool compare_backends = true;
    /// Human-readable labels of the backends (commands), recorded in campaign.json.
    std::map<std::string, std::string> backend_descriptions;
    /// Mutants per case for the metamorphic oracle (backend on a mutant vs the same
    /// backend on its original; docs/MUTATIONS.md), 0 for none.
    std::size_t mutants = 0;
    /// Mutations per mutant: 1..mutation_max_steps, drawn per mutant.
    std::size_t mutation_max_steps = 1;
    /// Which mutations (families, names); its `steps` is set per mutant.
    mutate::mutate_options mutation;
    /// Confirmed findings (campaign/triage.hpp): their signatures are labelled `known`.
    known_findings known;
    /// This process runs shard `shard_index` of `shard_count`: the cases whose offset from
    /// `first` is shard_index modulo shard_count (cases are pure functions of their index,
    /// so shards need no coordinator; `tensoracle report` merges their folders).
    std::uint64_t shard_index = 0, shard_count = 1;
    /// A corpus guided by rewrites (campaign/corpus.hpp), or every case afresh.
    guide_options guide;
    [[nodiscard]] judge_options judging() const {
        return {level, timeout_seconds, float64_oracle, recheck, localize, compare_backends};
    }
};

/// What the progress line shows.
struct campaign_progress {
    std::uint64_t done = 0, total = 0, skipped = 0;
    double seconds = 0.0;
    std::map<std::string, std::size_t> outcomes;  ///< over all backends
    std::size_t signatures = 0;
};

/// An error message with what changes between runs taken out: paths (any word
/// holding a '/', relative or absolute), addresses, numbers (value and node
/// names such as v12 keep their letters).
[[nodiscard]] inline std::string normalize_message(std::string_view m) {
    auto delimiter = [](char c) { return c == ' ' || c == '\t' || c == '\'' || c == '"' || c == ',' || c == '(' || c == ')' || c == '[' || c == ']'; };
    std::string out;
    std::size_t i = 0;
    while (i < m.size()) {
        if (delimiter(m[i])) {
            out += m[i++];
            continue;
        }
        std::size_t e = i;
        while (e < m.size() && !delimiter(m[e])) ++e;
        const auto word = m.substr(i, e - i);
        if (word.find('/') != std::string_view::npos) {
            out += "<path>";
            // keep a trailing ':' (e.g. "file.cc:12:") out of the path's place
            if (word.back() == ':') out += ':';
            i = e;
            continue;
        }
        for (std::size_t k = 0; k < word.size();) {
            const char c = word[k];
            if (c == '0' && k + 1 < word.size() && (word[k + 1] == 'x' || word[k + 1] == 'X')) {
                out += "0x#";
                k += 2;
                while (k < word.size() && std::isxdigit(static_cast<unsigned char>(word[k]))) ++k;
            } else if (std::isdigit(static_cast<unsigned char>(c))) {
                out += '#';
                while (k < word.size() && (std::isdigit(static_cast<unsigned char>(word[k])) || word[k] == '.')) ++k;
            } else {
                out += c;
                ++k;
            }
        }
        i = e;
    }
    return out;
}

/// A failure's identity: same content, same id, in any run, shard or machine.
struct signature {
    std::string backend;  ///< a backend, or "a vs b" for a disagreement between two
    outcome_class outcome = outcome_class::mismatch;
    std::string oracle;   ///< "reference", "backends", "protocol"
    std::string where;    ///< "op Sigmoid f32" (localized), "ops Add,Relu" (not), or a normalized message
    [[nodiscard]] std::string key() const { return backend + "|" + std::string(to_string(outcome)) + "|" + oracle + "|" + where; }
    [[nodiscard]] std::string id() const { return fnv1a_hex(key()); }
    /// The entry of a results.jsonl line's "signatures".
    [[nodiscard]] nlohmann::json json() const {
        return {{"id", id()}, {"backend", backend}, {"outcome", to_string(outcome)}, {"oracle", oracle}, {"where", where}};
    }
};

namespace detail {
using graph::detail::low_precision;
using graph::detail::widened;
}  // namespace detail
using graph::float64_refused;
using graph::widen_to_float64;
using graph::within_reference_precision;

namespace detail {

/// One backend's outputs judged against expected tensors (graph-output order).
struct judgement {
    outcome_class outcome = outcome_class::pass;
    std::string detail;
    std::size_t output = 0;  ///< the first failing output
    double max_abs_error = 0.0, max_rel_error = 0.0;
    std::optional<int> min_passing_level;
    /// The strictest GraphNet level every output passes (none when one passes none):
    /// what a speedup score S_t asks of a case that ran.
    std::optional<int> passing_level;
};

[[nodiscard]] inline judgement judge_outputs(const std::vector<tensor>& actual, const std::vector<tensor>& expected, double level_t) {
    judgement j;
    if (actual.size() != expected.size()) {
        j.outcome = outcome_class::shape_dtype;
        j.detail = std::to_string(actual.size()) + " outputs, expected " + std::to_string(expected.size());
        return j;
    }
    auto rank = [](outcome_class c) {
        return c == outcome_class::shape_dtype ? 3 : c == outcome_class::nan_inf ? 2 : c == outcome_class::mismatch ? 1 : 0;
    };
    bool every_output_passes_some_level = true;
    for (std::size_t k = 0; k < actual.size(); ++k) {
        const auto report = compare(actual[k], expected[k]);
        outcome_class c = outcome_class::pass;
        std::string d;
        if (!report.same_shape() || !report.same_dtype()) {
            c = outcome_class::shape_dtype;
            d = "output " + std::to_string(k) + ": " + std::string(name(actual[k].element_dtype())) + tensoracle::to_string(actual[k].shape()) +
                ", expected " + std::string(name(expected[k].element_dtype())) + tensoracle::to_string(expected[k].shape());
        } else if (!report.nan_inf_agree()) {
            c = outcome_class::nan_inf;
            d = "output " + std::to_string(k) + ": " + std::to_string(report.nan_mismatches()) + " NaN and " +
                std::to_string(report.inf_mismatches()) + " Inf positions disagree";
        } else if (!report.passes(level{level_t})) {
            c = outcome_class::mismatch;
            d = "output " + std::to_string(k) + ": " + std::to_string(report.mismatch_count(level{level_t})) + " of " +
                std::to_string(report.size()) + " elements beyond level " + std::to_string(static_cast<int>(level_t));
        }
        if (report.same_shape()) {
            j.max_abs_error = std::max(j.max_abs_error, report.abs_error().max);
            j.max_rel_error = std::max(j.max_rel_error, report.rel_error().max);
            if (c != outcome_class::pass && !j.min_passing_level) j.min_passing_level = report.min_passing_level();
        }
        const auto lvl = report.same_shape() && report.same_dtype() ? report.min_passing_level() : std::nullopt;
        if (!lvl) {
            every_output_passes_some_level = false;
        } else if (!j.passing_level || *lvl > *j.passing_level) {
            j.passing_level = lvl;
        }
        if (rank(c) > rank(j.outcome)) {
            j.outcome = c;
            j.detail = d;
            j.output = k;
        }
    }
    if (!every_output_passes_some_level) j.passing_level.reset();
    return j;
}

[[nodiscard]] inline bool identical(const std::vector<tensor>& a, const std::vector<tensor>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k) {
        const auto r = compare(a[k], b[k]);
        if (!r.passes(tolerance{0.0, 0.0})) return false;
    }
    return true;
}

inline void write_json(const std::filesystem::path& p, const nlohmann::json& j) {
    const auto tmp = std::filesystem::path(p.string() + ".tmp");
    {
        std::ofstream f(tmp);
        f << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        if (!f) throw error("tensoracle::campaign", "cannot write " + tmp.string());
    }
    std::filesystem::rename(tmp, p);
}

inline void reset_dir(const std::filesystem::path& d) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
    std::filesystem::create_directories(d, ec);
    if (ec) throw error("tensoracle::campaign", "cannot create " + d.string() + ": " + ec.message());
}

/// A localized signature's place: "op <type> <dtype>".
[[nodiscard]] inline std::string op_where(const std::string& op_type, dtype d) {
    return "op " + op_type + " " + std::string(name(d));
}

[[nodiscard]] inline std::string sorted_ops(const std::vector<std::string>& ops) {
    std::set<std::string> s(ops.begin(), ops.end());
    std::string out = "ops ";
    for (const auto& o : s) out += (out.size() > 4 ? "," : "") + o;
    return out;
}

/// One thread's state: its own backends (workers are per thread) and scratch folder.
struct lane {
    std::vector<std::unique_ptr<backend>> backends;
    std::filesystem::path scratch;
};

/// Writes a graph and its inputs where the backends read them: `dir`/model.onnx, `dir`/inputs/.
inline void write_model(const graph::graph& g, const std::map<std::string, tensor, std::less<>>& inputs, const std::filesystem::path& dir) {
    reset_dir(dir / "inputs");
    io::save_model(g, dir / "model.onnx");
    for (std::size_t k = 0; k < g.inputs.size(); ++k) {
        io::save_tensor(inputs.at(g.inputs[k].name), dir / "inputs" / ("input_" + std::to_string(k) + ".pb"), g.inputs[k].name);
    }
}

/// 10 as "10", 0.5 as "0.5".
[[nodiscard]] inline std::string seconds_text(double s) {
    std::ostringstream o;
    o << s;
    return o.str();
}

[[nodiscard]] inline backend_run run_on(backend& b, const std::filesystem::path& dir, const std::string& out_name, std::size_t outputs, double timeout) {
    case_paths p{dir / "model.onnx", dir / "inputs", dir / out_name, outputs};
    reset_dir(p.outputs);
    auto r = b.run(p, timeout);
    // A failure under the backends' memory limit says so: the system under test asked
    // for more than it was given (set_backend_memory_limit), it did not break by itself.
    if (const auto limit = backend_memory_limit();
        limit != 0 && (r.status == run_status::crash || r.status == run_status::runtime_error || r.status == run_status::compile_failure)) {
        const std::string text = r.message + "\n" + r.process.err;
        bool oom = false;
        for (const char* sign : {"bad_alloc", "Cannot allocate memory", "out of memory", "Out of memory", "failed to allocate", "Failed to allocate",
                                 "OOM", "ENOMEM", "mmap failed", "allocation failed", "MemoryError", "memory exhausted"}) {
            oom = oom || text.find(sign) != std::string::npos;
        }
        if (oom) {
            r.message += "; out of memory under the backends' limit of " + memory_size_text(limit) + " (--backend-memory-limit)";
        } else if (r.status == run_status::crash) {
            // A process that cannot map what it needs may die of a signal without a word.
            r.message += "; it ran under the backends' memory limit of " + memory_size_text(limit) + " (--backend-memory-limit)";
        }
    }
    return r;
}

/// The graph with every node output also a graph output (Polygraphy's "mark all").
[[nodiscard]] inline graph::graph mark_all(const graph::graph& g, const std::map<std::string, tensor, std::less<>>& values,
                                          std::vector<std::pair<std::size_t, std::string>>& marked) {
    graph::graph m = g;
    std::set<std::string> present;
    for (const auto& o : m.outputs) present.insert(o.name);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        for (const auto& o : g.nodes[i].outputs) {
            if (o.empty()) continue;
            marked.emplace_back(i, o);
            if (present.insert(o).second) {
                const auto& t = values.at(o);
                m.outputs.push_back({o, t.element_dtype(), t.shape()});
            }
        }
    }
    return m;
}

/// The first `k + 1` nodes of `order` (a topological order of `g`) as a graph of
/// their own: the graph inputs and initializers they read, and as outputs every value
/// they make that no node of the prefix reads (and the graph's outputs among them),
/// so that no node of the prefix is dead code a backend could drop.
[[nodiscard]] inline graph::graph prefix_graph(const graph::graph& g, const std::vector<std::size_t>& order, std::size_t k,
                                               const std::map<std::string, tensor, std::less<>>& values) {
    if (k >= order.size()) {
        throw error("tensoracle::campaign::prefix_graph", "a prefix of " + std::to_string(k + 1) + " nodes of a graph of " + std::to_string(order.size()));
    }
    graph::graph p;
    p.name = g.name + "_prefix" + std::to_string(k + 1);
    p.opset = g.opset;
    std::set<std::string> read, made;
    // In the graph's own node order, not the prefix's: a system runs the nodes of a
    // graph in an order of its own, and the whole prefix must be the graph itself.
    std::vector<std::size_t> kept(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k + 1));
    std::sort(kept.begin(), kept.end());
    for (const auto i : kept) {
        const auto& n = g.nodes.at(i);
        p.nodes.push_back(n);
        for (const auto& in : graph::graph::reads(n)) read.insert(in);
        for (const auto& o : n.outputs) {
            if (!o.empty()) made.insert(o);
        }
    }
    for (const auto& in : g.inputs) {
        if (read.contains(in.name)) p.inputs.push_back(in);
    }
    for (const auto& [name, t] : g.initializers) {
        if (read.contains(name)) p.initializers.insert_or_assign(name, t);
    }
    std::set<std::string> graph_outputs;
    for (const auto& o : g.outputs) graph_outputs.insert(o.name);
    for (const auto& n : p.nodes) {
        for (const auto& o : n.outputs) {
            if (o.empty() || (read.contains(o) && !graph_outputs.contains(o))) continue;
            const auto& t = values.at(o);
            p.outputs.push_back({o, t.element_dtype(), t.shape()});
        }
    }
    return p;
}

}  // namespace detail

/// Runs one case on a lane's backends and judges it: outcomes, backend-vs-backend
/// comparisons and signatures (localized where it can). The campaign's judgement,
/// shared with the reducer (campaign/reduce.hpp) so that a reduced case is held to
/// exactly the signature the campaign gave the original.
class case_judge {
public:
    struct backend_result {
        backend_run run;
        outcome_class outcome = outcome_class::pass;
        std::string detail;
        detail::judgement judged;
        std::optional<signature> sig;
        /// What the backend reported it executed (campaign/rewrites.hpp); empty optional: no report.
        std::optional<std::vector<rewrite_event>> rewrites;
    };

    struct evaluation {
        std::vector<backend_result> results;  ///< lane order
        nlohmann::json pairs = nlohmann::json::object();
        std::vector<signature> pair_signatures;
        std::string truth_note;
        /// Every signature of the case: the backends' in lane order, then the pairs'.
        [[nodiscard]] std::vector<signature> signatures() const {
            std::vector<signature> s;
            for (const auto& r : results) {
                if (r.sig) s.push_back(*r.sig);
            }
            s.insert(s.end(), pair_signatures.begin(), pair_signatures.end());
            return s;
        }
    };

    explicit case_judge(judge_options o) : o_(o) {
        if (!(o_.timeout_seconds > 0)) throw error("tensoracle::campaign::case_judge", "the time-out must be positive");
        (void)tolerance_level(dtype::f32, o_.level);  // throws for a level outside [-10, 0]
    }
    [[nodiscard]] const judge_options& options() const noexcept { return o_; }

    /// Writes `c` to the lane's scratch folder, runs it on every backend of the lane and
    /// judges it. Throws backend_unavailable when a backend cannot be started.
    [[nodiscard]] evaluation evaluate(detail::lane& lane, const io::generated_case& c) const {
        evaluation e;
        e.results.resize(lane.backends.size());
        auto& results = e.results;
        std::vector<tensor> expected;
        for (const auto& out : c.model.outputs) expected.push_back(c.outputs.at(out.name));
        const auto dir = lane.scratch;
        detail::write_model(c.model, c.inputs, dir);
        std::optional<std::vector<tensor>> truth;  // float64 re-evaluation, computed when first needed
        bool truth_tried = false;
        for (std::size_t b = 0; b < lane.backends.size(); ++b) {
            auto& be = *lane.backends[b];
            auto& r = results[b];
            std::string out_name = "out_" + std::to_string(b);
            r.run = detail::run_on(be, dir, out_name, expected.size(), o_.timeout_seconds);
            std::string late;  // a first run that timed out and a second that did not
            if (r.run.status == run_status::hang && o_.recheck) {
                // A time-out is a claim only if it repeats with room to spare: a loaded
                // machine ends runs late, as does a run whose pipe another lane's child
                // holds open (process.hpp's child_pipes guards against that).
                auto again = detail::run_on(be, dir, "again_" + std::to_string(b), expected.size(), 2.0 * o_.timeout_seconds);
                if (again.status == run_status::hang) {
                    r.run.message += "; a second run timed out too, with twice the limit";
                } else {
                    late = "a first run timed out after " + detail::seconds_text(o_.timeout_seconds) +
                           " s; this is a second run's, with twice the limit";
                    r.run = std::move(again);
                    out_name = "again_" + std::to_string(b);
                }
            }
            r.rewrites = reported_rewrites(c.model, dir / out_name);
            r.detail = r.run.message;
            switch (r.run.status) {
                case run_status::ran: break;
                case run_status::unsupported: r.outcome = outcome_class::unsupported; break;
                case run_status::compile_failure: r.outcome = outcome_class::compile_failure; break;
                case run_status::runtime_error: r.outcome = outcome_class::runtime_error; break;
                case run_status::crash: r.outcome = outcome_class::crash; break;
                case run_status::hang: r.outcome = outcome_class::hang; break;
                case run_status::bad_output: r.outcome = outcome_class::bad_output; break;
            }
            if (!late.empty()) r.detail += (r.detail.empty() ? "" : "; ") + late;
            if (r.run.status != run_status::ran) continue;
            r.judged = detail::judge_outputs(r.run.outputs, expected, o_.level);
            r.outcome = r.judged.outcome;
            r.detail = r.judged.detail + (late.empty() ? "" : "; " + late);
            if (r.outcome == outcome_class::mismatch || r.outcome == outcome_class::nan_inf) {
                if (o_.recheck) {
                    const auto again = detail::run_on(be, dir, "again_" + std::to_string(b), expected.size(), o_.timeout_seconds);
                    if (again.status != run_status::ran || !detail::identical(again.outputs, r.run.outputs)) {
                        r.outcome = outcome_class::nondeterministic;
                        r.detail = "a second run " + (again.status == run_status::ran ? std::string("gave other values") : "ended " + std::string(to_string(again.status))) +
                                   " (first: " + r.detail + ")";
                        continue;
                    }
                }
                if (o_.float64_oracle && has_low_precision_values(c)) {
                    if (!truth_tried) {
                        truth_tried = true;
                        truth = float64_truth(c, e.truth_note);
                    }
                    if (truth && all_within_reference_precision(r.run.outputs, expected, *truth)) {
                        r.outcome = outcome_class::reference_precision;
                        r.detail += "; as close to the float64 re-evaluation as our same-dtype reference";
                    }
                }
            }
        }
        // Backend vs backend: outcomes, then values.
        if (o_.compare_backends) {
            for (std::size_t a = 0; a < results.size(); ++a) {
                for (std::size_t b = a + 1; b < results.size(); ++b) {
                    if (family(lane.backends[a]->name()) != family(lane.backends[b]->name())) continue;
                    compare_pair(lane, c, dir, a, b, results, e.pairs, e.pair_signatures);
                }
            }
        }
        for (std::size_t b = 0; b < results.size(); ++b) {
            if (is_failure(results[b].outcome)) results[b].sig = make_signature(lane, b, c, dir, results[b]);
        }
        return e;
    }

    /// Backends whose names share the part before the first '-' ("onnxruntime",
    /// "onnxruntime-noopt") are configurations of one system: compared with each other.
    /// "torchscript" is PyTorch's JIT, a configuration of "torch" (eager).
    static std::string family(const std::string& name) {
        std::string f = name.substr(0, name.find('-'));
        return f == "torchscript" ? "torch" : f;
    }

    static bool has_low_precision_values(const io::generated_case& c) {
        return std::any_of(c.values.begin(), c.values.end(), [](const auto& kv) { return detail::low_precision(kv.second.element_dtype()); });
    }

    std::optional<std::vector<tensor>> float64_truth(const io::generated_case& c, std::string& note) const {
        try {
            const auto refused = float64_refused(c.model);
            const auto w = widen_to_float64(c.model, refused);
            std::map<std::string, tensor, std::less<>> feeds;
            for (const auto& [name, t] : c.inputs) feeds.emplace(name, refused.count(name) ? t : detail::widened(t));
            const auto r = graph::run(w, feeds);
            std::vector<tensor> out;
            for (const auto& o : w.outputs) out.push_back(r.outputs.at(o.name));
            return out;
        } catch (const std::exception& e) {
            note = std::string("float64 re-evaluation unavailable: ") + e.what();
            return std::nullopt;
        }
    }

    bool all_within_reference_precision(const std::vector<tensor>& b, const std::vector<tensor>& r, const std::vector<tensor>& truth) const {
        for (std::size_t k = 0; k < b.size(); ++k) {
            const auto d = r[k].element_dtype();
            if (!info(d).is_floating) {
                // A discrete output (a comparison, an index) of low-precision arithmetic: each
                // element must equal ours or the float64 re-evaluation's.
                if (b[k].element_dtype() != d || b[k].shape() != r[k].shape() || truth[k].shape() != r[k].shape()) return false;
                for (std::size_t i = 0; i < b[k].size(); ++i) {
                    const double bv = b[k].value_as_double(i);
                    if (bv != r[k].value_as_double(i) && bv != truth[k].value_as_double(i)) return false;
                }
                continue;
            }
            if (d == dtype::f64) {
                if (!compare(b[k], r[k]).passes(level{o_.level})) return false;
                continue;
            }
            if (b[k].element_dtype() != d) return false;
            if (!within_reference_precision(b[k], r[k], truth[k], tolerance_level(d, o_.level))) return false;
        }
        return true;
    }

    void compare_pair(detail::lane& lane, const io::generated_case& c, const std::filesystem::path& dir, std::size_t a, std::size_t b,
                      std::vector<backend_result>& results, nlohmann::json& pairs,
                      std::vector<signature>& pair_sigs) const {
        auto& ra = results[a];
        auto& rb = results[b];
        const std::string pair = lane.backends[a]->name() + " vs " + lane.backends[b]->name();
        const bool a_ran = ra.run.status == run_status::ran, b_ran = rb.run.status == run_status::ran;
        // What one configuration runs is not "unsupported" in the other: it is that one's failure.
        if (a_ran && rb.outcome == outcome_class::unsupported) {
            rb.outcome = outcome_class::compile_failure;
            rb.detail = "unsupported here, but " + lane.backends[a]->name() + " runs it: " + rb.detail;
        }
        if (b_ran && ra.outcome == outcome_class::unsupported) {
            ra.outcome = outcome_class::compile_failure;
            ra.detail = "unsupported here, but " + lane.backends[b]->name() + " runs it: " + ra.detail;
        }
        // A load failure of one configuration only (an optimization that made the graph
        // invalid) is that configuration's fault, not a model the system refuses: its
        // signature says so, and triage does not file it as a limitation. The other
        // loaded the model when it ran it or failed only while running it.
        const bool a_loaded = a_ran || ra.run.status == run_status::runtime_error, b_loaded = b_ran || rb.run.status == run_status::runtime_error;
        if (a_loaded && rb.outcome == outcome_class::compile_failure && rb.detail.rfind("unsupported here, but ", 0) != 0) {
            rb.detail = "fails to load, but " + lane.backends[a]->name() + " loads it: " + rb.detail;
        }
        if (b_loaded && ra.outcome == outcome_class::compile_failure && ra.detail.rfind("unsupported here, but ", 0) != 0) {
            ra.detail = "fails to load, but " + lane.backends[b]->name() + " loads it: " + ra.detail;
        }
        if (!a_ran || !b_ran) return;
        const auto j = detail::judge_outputs(ra.run.outputs, rb.run.outputs, o_.level);
        pairs[pair] = {{"outcome", to_string(j.outcome)}, {"detail", j.detail}, {"max_abs_error", j.max_abs_error}};
        if (j.outcome == outcome_class::pass) return;
        // Both within the reference's tolerance (or as close to float64 truth as it is): they
        // may still differ by up to twice that from each other, which is no one's bug.
        auto acceptable = [](outcome_class k) { return k == outcome_class::pass || k == outcome_class::reference_precision; };
        if (j.outcome == outcome_class::mismatch && acceptable(ra.outcome) && acceptable(rb.outcome)) {
            pairs[pair]["outcome"] = to_string(outcome_class::reference_precision);
            pairs[pair]["detail"] = j.detail + "; each is within the reference's tolerance or precision";
            return;
        }
        // Which one disagrees: localized on the pair itself, comparing the marked intermediates of both.
        signature s{pair, j.outcome, "backends", detail::sorted_ops(c.op_types)};
        if (o_.localize) {
            const marked_graph mg(c, dir);
            const auto xa = mg.run(*lane.backends[a], "out_a", o_.timeout_seconds);
            const auto xb = mg.run(*lane.backends[b], "out_b", o_.timeout_seconds);
            if (xa.status == run_status::ran && xb.status == run_status::ran) {
                if (auto node = first_disagreement(mg, xa.outputs, [&](std::size_t k) -> const tensor& { return xb.outputs[k]; })) {
                    s.where = mg.where(*node, xa.outputs);
                }
            }
        }
        pairs[pair]["signature"] = s.id();
        pair_sigs.push_back(std::move(s));
    }

    /// The case's graph with every intermediate marked as an output, written once to
    /// `dir`/marked for the runs that localize one failure.
    struct marked_graph {
        std::vector<std::pair<std::size_t, std::string>> marked;  ///< (node, value) in graph order
        graph::graph model;
        std::map<std::string, std::size_t> position;  ///< value -> graph-output index
        std::filesystem::path dir;
        marked_graph(const io::generated_case& c, const std::filesystem::path& case_dir)
            : model(detail::mark_all(c.model, c.values, marked)), dir(case_dir / "marked") {
            for (std::size_t k = 0; k < model.outputs.size(); ++k) position.emplace(model.outputs[k].name, k);
            detail::write_model(model, c.inputs, dir);
        }
        [[nodiscard]] backend_run run(backend& be, const std::string& out, double timeout) const {
            return detail::run_on(be, dir, out, model.outputs.size(), timeout);
        }
        /// "op <type> <dtype>" of `node`, the dtype its first marked output has in `got`.
        [[nodiscard]] std::string where(std::size_t node, const std::vector<tensor>& got) const {
            for (const auto& [n, value] : marked) {
                if (n == node) return detail::op_where(model.nodes[node].op_type, got.at(position.at(value)).element_dtype());
            }
            return "op " + model.nodes[node].op_type + " ";  // no marked output (not reached: localized nodes have one)
        }
    };

    /// The first node (in graph order) one of whose marked outputs disagrees.
    template <class Expected>
    std::optional<std::size_t> first_disagreement(const marked_graph& mg, const std::vector<tensor>& got, Expected&& expected_at) const {
        for (const auto& [node, value] : mg.marked) {
            const auto k = mg.position.at(value);
            if (k >= got.size()) return std::nullopt;
            const auto j = detail::judge_outputs({got[k]}, {expected_at(k)}, o_.level);
            if (j.outcome != outcome_class::pass) return node;
        }
        return std::nullopt;
    }

    /// Does our kernel, fed the backend's own values of the node's inputs, give the
    /// backend's outputs of that node? Then the node is right and the disagreement
    /// is rounding from upstream (within tolerance there) amplified by it.
    bool node_reproduces(const marked_graph& mg, std::size_t node, const std::vector<tensor>& got,
                         const std::map<std::string, tensor, std::less<>>& values) const {
        const auto& position = mg.position;
        const auto& n = mg.model.nodes[node];
        try {
            std::vector<const tensor*> args;
            for (const auto& in : n.inputs) {
                if (in.empty()) {
                    args.push_back(nullptr);
                } else if (const auto it = position.find(in); it != position.end() && it->second < got.size()) {
                    args.push_back(&got[it->second]);
                } else {
                    args.push_back(&values.at(in));
                }
            }
            while (!args.empty() && args.back() == nullptr) args.pop_back();
            const auto& op = ops::get_op(n.op_type);
            const auto out = spec::evaluate(op, args, graph::call_attributes(op, n));
            for (std::size_t o = 0; o < n.outputs.size() && o < out.size(); ++o) {
                if (n.outputs[o].empty()) continue;
                const auto it = position.find(n.outputs[o]);
                if (it == position.end() || it->second >= got.size()) return false;
                if (detail::judge_outputs({got[it->second]}, {out[o]}, o_.level).outcome != outcome_class::pass) return false;
            }
            return true;
        } catch (const std::exception&) {
            return false;  // e.g. the backend's inputs are outside the op's domain: not evidence of anything
        }
    }

    /// The signature of a failure; for a value failure, localizes it first and may
    /// relabel it reference_precision (the node reproduces on the backend's inputs).
    std::optional<signature> make_signature(detail::lane& lane, std::size_t b, const io::generated_case& c, const std::filesystem::path& dir,
                                            backend_result& r) const {
        signature s{lane.backends[b]->name(), r.outcome, "reference", {}};
        switch (r.outcome) {
            case outcome_class::crash:
            case outcome_class::hang: {
                // No values to compare: the first node whose prefix of the topological
                // order crashes (or hangs) the same way, bisected, is the location; a
                // crash keeps its signal. Without one, the message (a crash) or the op
                // set (a hang) stays the signature.
                s.oracle = "process";
                s.where = r.outcome == outcome_class::crash
                              ? normalize_message(r.run.message) + "|" + normalize_message(detail::first_line(r.run.process.err))
                              : detail::sorted_ops(c.op_types);
                if (!o_.localize) return s;
                if (const auto node = first_failing_prefix(*lane.backends[b], c, dir, r.run.status)) {
                    const auto& n = c.model.nodes[*node];
                    const auto it = n.outputs.empty() ? c.values.end() : c.values.find(n.outputs[0]);
                    if (it != c.values.end()) {
                        s.where = detail::op_where(n.op_type, it->second.element_dtype());
                        if (r.outcome == outcome_class::crash) s.where += "|" + normalize_message(r.run.message);
                    }
                }
                return s;
            }
            case outcome_class::nondeterministic: {
                // The first node whose marked output differs between two runs.
                s.oracle = "rerun";
                s.where = detail::sorted_ops(c.op_types);
                if (!o_.localize) return s;
                const marked_graph mg(c, dir);
                const auto x = mg.run(*lane.backends[b], "out", o_.timeout_seconds);
                const auto y = mg.run(*lane.backends[b], "again", o_.timeout_seconds);
                if (x.status != run_status::ran || y.status != run_status::ran || y.outputs.size() != x.outputs.size()) return s;
                for (const auto& [node, value] : mg.marked) {
                    const auto k = mg.position.at(value);
                    if (k < x.outputs.size() && !detail::identical({x.outputs[k]}, {y.outputs[k]})) {
                        s.where = mg.where(node, x.outputs);
                        break;
                    }
                }
                return s;
            }
            case outcome_class::compile_failure:
            case outcome_class::runtime_error:
            case outcome_class::bad_output:
                s.oracle = "process";
                s.where = normalize_message(r.detail);
                return s;
            default: break;
        }
        s.where = detail::sorted_ops(c.op_types);
        if (!o_.localize) return s;
        const marked_graph mg(c, dir);
        const auto x = mg.run(*lane.backends[b], "out", o_.timeout_seconds);
        if (x.status != run_status::ran) return s;
        const auto node = first_disagreement(mg, x.outputs, [&](std::size_t k) -> const tensor& { return c.values.at(mg.model.outputs[k].name); });
        if (!node) return s;  // marking every output made it vanish: keep the op-set signature
        s.where = mg.where(*node, x.outputs);
        if (r.outcome != outcome_class::shape_dtype && node_reproduces(mg, *node, x.outputs, c.values)) {
            r.outcome = outcome_class::reference_precision;
            r.detail += "; first disagreeing node " + mg.model.nodes[*node].label() +
                        " gives the backend's values from the backend's own inputs (upstream rounding, amplified)";
            return std::nullopt;
        }
        return s;
    }

    /// The node (index into c.model.nodes) that ends the shortest prefix of the
    /// topological order on which `b` ends with `status` (a crash, a hang), found by
    /// bisection: about log2(nodes) runs, each a hang costing a time-out. Empty when
    /// the whole graph's prefix does not reproduce it (a failure of the graph's
    /// outputs or of the whole) or a value is missing.
    [[nodiscard]] std::optional<std::size_t> first_failing_prefix(backend& b, const io::generated_case& c, const std::filesystem::path& dir,
                                                                  run_status status) const {
        if (c.model.nodes.empty()) return std::nullopt;
        std::vector<std::size_t> order;
        try {
            order = c.model.topological_order();
        } catch (const std::exception&) {
            return std::nullopt;
        }
        auto fails = [&](std::size_t k) {
            try {
                const auto p = detail::prefix_graph(c.model, order, k, c.values);
                const auto folder = dir / ("prefix" + std::to_string(k + 1));
                detail::write_model(p, c.inputs, folder);
                return detail::run_on(b, folder, "out", p.outputs.size(), o_.timeout_seconds).status == status;
            } catch (const std::out_of_range&) {
                return false;  // a value the reference did not record
            }
        };
        std::size_t lo = 0, hi = order.size() - 1;
        if (!fails(hi)) return std::nullopt;
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (fails(mid)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return order[lo];
    }

private:
    judge_options o_;
};

/// What a summary covers: a campaign folder, its backends and the case indices that belong to it.
namespace detail {
/// Whether a results.jsonl line has the shape its readers rely on (the summary, the
/// report, resuming, merging): each field they read, where present, of the type they
/// read it as. A line that does not (cut by a kill, edited by hand, written by another
/// program) is treated as a line cut by a kill: left out, never half-read.
[[nodiscard]] inline bool is_result_line(const nlohmann::json& j) {
    using json = nlohmann::json;
    auto has = [](const json& o, const char* k, bool (json::*is)() const noexcept) {
        const auto it = o.find(k);
        return it == o.end() || ((*it).*is)();
    };
    auto strings = [&](const json& o, std::initializer_list<const char*> keys) {
        for (const char* k : keys) {
            if (!has(o, k, &json::is_string)) return false;
        }
        return true;
    };
    auto numbers = [&](const json& o, std::initializer_list<const char*> keys) {
        for (const char* k : keys) {
            if (!has(o, k, &json::is_number)) return false;
        }
        return true;
    };
    auto levels = [&](const json& o) {
        for (const char* k : {"passing_level", "min_passing_level", "graphnet_error_code"}) {
            const auto it = o.find(k);
            if (it != o.end() && (!it->is_number_integer() || it->get<std::int64_t>() < -1000 || it->get<std::int64_t>() > 1000)) return false;
        }
        return true;
    };
    // {name: {"outcome": string, ...}}: backends and pairs, of a case or a mutant.
    auto results = [&](const json& o, const char* key, bool backend) {
        const auto it = o.find(key);
        if (it == o.end()) return true;
        if (!it->is_object()) return false;
        for (const auto& r : *it) {
            if (!r.is_object() || !r.contains("outcome") || !r["outcome"].is_string() || !strings(r, {"detail", "signature"}) ||
                !numbers(r, {"seconds", "max_abs_error"}) || !levels(r)) {
                return false;
            }
            if (const auto e = r.find("max_rel_error"); e != r.end() && !e->is_number() && !e->is_null()) return false;
            if (!backend) continue;
            if (const auto rw = r.find("rewrites"); rw != r.end()) {
                if (!rw->is_array()) return false;
                for (const auto& ev : *rw) {
                    if (!ev.is_object() || !strings(ev, {"kind", "class"})) return false;
                }
            }
        }
        return true;
    };
    auto signatures = [&](const json& o) {
        const auto it = o.find("signatures");
        if (it == o.end()) return true;
        if (!it->is_array()) return false;
        for (const auto& g : *it) {
            if (!g.is_object() || !strings(g, {"case"})) return false;
            for (const char* k : {"id", "backend", "outcome", "oracle", "where"}) {
                if (!g.contains(k) || !g[k].is_string()) return false;
            }
            if (const auto n = g.find("nodes"); n != g.end() && !n->is_number_unsigned()) return false;
        }
        return true;
    };
    if (!j.is_object() || !j.contains("index") || !j["index"].is_number_unsigned() || !j.contains("case") || !j["case"].is_string()) return false;
    if (!signatures(j) || !results(j, "backends", true) || !results(j, "pairs", false) || !numbers(j, {"seconds", "reference_seconds"})) return false;
    if (const auto n = j.find("nodes"); n != j.end() && !n->is_number_unsigned()) return false;
    if (const auto m = j.find("motifs"); m != j.end()) {
        if (!m->is_array()) return false;
        for (const auto& x : *m) {
            if (!x.is_string()) return false;
        }
    }
    if (const auto d = j.find("derivation"); d != j.end() && (!d->is_object() || !strings(*d, {"by"}))) return false;
    if (const auto ms = j.find("mutants"); ms != j.end()) {
        if (!ms->is_array()) return false;
        for (const auto& m : *ms) {
            if (!m.is_object() || !strings(m, {"skipped"})) return false;
            if (m.contains("skipped")) continue;
            if (!m.contains("backends") || !results(m, "backends", false) || !results(m, "pairs", false)) return false;
            if (!signatures(m)) return false;
        }
    }
    return true;
}
}  // namespace detail

struct summary_scope {
    std::filesystem::path dir;
    std::vector<std::string> backends;
    std::function<bool(std::uint64_t)> includes;
    std::uint64_t requested = 0;
    double level = -4.0;
    std::uint64_t seed = 0;
    std::string config_hash;
    bool mutants = false;
    nlohmann::json shard;  ///< {"index", "count"} of a shard, null for a whole campaign
    known_findings known;  ///< labels signatures `known` (triage)
};
inline nlohmann::json write_summary(const summary_scope& sc);

/// How many of `count` cases shard `index` of `shards` runs (case k goes to shard k mod shards).
[[nodiscard]] constexpr std::uint64_t shard_size(std::uint64_t count, std::uint64_t index, std::uint64_t shards) noexcept {
    return count / shards + (index < count % shards ? 1 : 0);
}

/// Runs the campaign; see the file comment. Throws backend_unavailable when a
/// backend cannot be started at all, and tensoracle::error for a bad output folder.
class campaign_runner {
public:
    campaign_runner(campaign_options o, std::vector<std::unique_ptr<backend>> backends)
        : o_(std::move(o)), judge_(o_.judging()), gen_(o_.config), prototypes_(std::move(backends)) {
        const char* where = "tensoracle::campaign::run_campaign";
        if (prototypes_.empty()) throw error(where, "no backend to run");
        std::set<std::string> names;
        for (const auto& b : prototypes_) {
            if (!names.insert(b->name()).second) throw error(where, "two backends named '" + b->name() + "'");
            if (b->name().find(" vs ") != std::string::npos) throw error(where, "a backend name may not contain ' vs '");
        }
        if (o_.out.empty()) throw error(where, "no output folder");
        if (o_.shard_count == 0 || o_.shard_index >= o_.shard_count) {
            throw error(where, "shard " + std::to_string(o_.shard_index) + " of " + std::to_string(o_.shard_count) +
                                   ": the index must be below the count (shards are numbered from 0)");
        }
        o_.jobs = std::max(1u, o_.jobs);
        o_.guide.validate();
    }

    /// Runs (or resumes) and writes summary.json / summary.txt; returns the summary.
    nlohmann::json run(const std::function<void(const campaign_progress&)>& on_progress = {}, const std::atomic<bool>* stop = nullptr) {
        std::filesystem::create_directories(o_.out / "cases");
        check_or_write_settings();
        const bool guided = o_.guide.mode != guide_mode::none;
        corpus_ = rewrite_corpus(o_.guide);
        std::map<std::uint64_t, nlohmann::json> journaled;  // guided: the lines already judged, to replay
        const auto done = journal_indices(guided ? &journaled : nullptr);
        // This shard's cases, in rounds: the corpus changes only between rounds.
        const auto mine = shard_size(o_.count, o_.shard_index, o_.shard_count);
        const std::uint64_t per_round = guided ? o_.guide.round : std::max<std::uint64_t>(1, mine);
        std::vector<std::vector<std::uint64_t>> rounds;
        std::uint64_t position = 0;
        for (std::uint64_t k = o_.shard_index; k < o_.count; k += o_.shard_count, ++position) {
            if (position % per_round == 0) rounds.emplace_back();
            rounds.back().push_back(o_.first + k);
        }
        progress_.total = mine;
        progress_.skipped = done.size();
        progress_.done = progress_.skipped;
        journal_.open(o_.out / "results.jsonl", std::ios::app);
        if (!journal_) throw error("tensoracle::campaign", "cannot append to " + (o_.out / "results.jsonl").string());
        if (guided) std::filesystem::create_directories(o_.out / "corpus");

        std::vector<detail::lane> lanes(o_.jobs);
        for (unsigned j = 0; j < o_.jobs; ++j) {
            for (const auto& b : prototypes_) lanes[j].backends.push_back(b->clone());
            lanes[j].scratch = o_.out / ".work" / std::to_string(j);
        }
        std::exception_ptr fatal;
        const auto start = std::chrono::steady_clock::now();
        auto out_of_time = [&] {
            return (stop && stop->load()) ||
                   (o_.time_limit_seconds > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > o_.time_limit_seconds);
        };
        for (const auto& round : rounds) {
            std::vector<std::uint64_t> todo;
            for (const auto i : round) {
                if (!done.contains(i)) todo.push_back(i);
            }
            std::atomic<std::size_t> next{0};
            auto worker = [&](detail::lane& lane) {
                for (;;) {
                    if (out_of_time()) return;
                    {
                        std::lock_guard lock(mutex_);
                        if (fatal) return;
                    }
                    const std::size_t k = next.fetch_add(1);
                    if (k >= todo.size()) return;
                    try {
                        auto line = run_case(lane, todo[k]);
                        record(line, start, on_progress);
                    } catch (const backend_unavailable&) {
                        std::lock_guard lock(mutex_);
                        if (!fatal) fatal = std::current_exception();
                        return;
                    }
                }
            };
            if (!todo.empty()) {
                std::vector<std::thread> pool;
                for (unsigned j = 1; j < o_.jobs && j < todo.size(); ++j) pool.emplace_back(worker, std::ref(lanes[j]));
                worker(lanes[0]);
                for (auto& t : pool) t.join();
            }
            if (fatal || next.load() < todo.size()) break;  // stopped inside the round: its corpus update waits for the resume
            if (guided) end_round(round, journaled);
        }
        journal_.close();
        lanes.clear();  // stops the workers
        std::error_code ec;
        std::filesystem::remove_all(o_.out / ".work", ec);
        if (fatal) std::rethrow_exception(fatal);
        return write_summary();
    }

    /// The corpus so far (a guided campaign's, after run()).
    [[nodiscard]] const rewrite_corpus& corpus() const noexcept { return corpus_; }

private:
    // --- settings and journal --------------------------------------------------
    [[nodiscard]] nlohmann::json settings() const {
        nlohmann::json b = nlohmann::json::array();
        for (const auto& p : prototypes_) {
            const auto it = o_.backend_descriptions.find(p->name());
            b.push_back({{"name", p->name()}, {"command", it == o_.backend_descriptions.end() ? "" : it->second}});
        }
        return {{"seed", o_.seed},
                {"config_hash", o_.config.hash()},
                {"config", gen::to_json(o_.config)},
                {"level", o_.level},
                {"backends", b},
                {"float64_oracle", o_.float64_oracle},
                {"recheck", o_.recheck},
                {"localize", o_.localize},
                {"compare_backends", o_.compare_backends},
                {"mutants", mutation_settings()},
                {"first", o_.first},
                {"count", o_.count},
                {"shard", {{"index", o_.shard_index}, {"count", o_.shard_count}}},
                {"known_findings", o_.known.json()},
                {"guide", o_.guide.json()}};
    }

    [[nodiscard]] nlohmann::json mutation_settings() const {
        if (o_.mutants == 0) return 0;
        nlohmann::json families = nlohmann::json::array();
        for (const auto f : o_.mutation.families) families.push_back(std::string(mutate::to_string(f)));
        return {{"per_case", o_.mutants}, {"max_steps", o_.mutation_max_steps}, {"families", families}, {"only", o_.mutation.only}};
    }

    void check_or_write_settings() {
        const auto p = o_.out / "campaign.json";
        auto mine = settings();
        if (std::filesystem::exists(p)) {
            nlohmann::json theirs;
            try {
                std::ifstream f(p);
                theirs = nlohmann::json::parse(f);
            } catch (const std::exception& e) {
                throw error("tensoracle::campaign", p.string() + " is not readable JSON: " + e.what());
            }
            // A resumed campaign must be the same campaign: its journal only holds those results.
            for (const char* k : {"seed", "config_hash", "level", "backends", "float64_oracle", "recheck", "localize", "compare_backends", "mutants", "shard", "guide"}) {
                // Older campaigns recorded neither mutants, shards nor a guide.
                const auto fallback = std::string_view(k) == "mutants" ? nlohmann::json(0)
                                      : std::string_view(k) == "shard" ? nlohmann::json{{"index", 0}, {"count", 1}}
                                      : std::string_view(k) == "guide" ? nlohmann::json{{"mode", "none"}}
                                                                       : nlohmann::json();
                if (theirs.value(k, fallback) != mine[k]) {
                    throw error("tensoracle::campaign", o_.out.string() + " holds a campaign with another '" + k + "' (" +
                                                            theirs.value(k, fallback).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " there, " + mine[k].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                                            " now): resume it with the same settings, or use another --out");
                }
            }
        }
        detail::write_json(p, mine);
    }

    /// Cases already judged (the journal's complete lines; a line cut by a kill is
    /// dropped); with `lines`, their lines too.
    std::set<std::uint64_t> journal_indices(std::map<std::uint64_t, nlohmann::json>* lines = nullptr) {
        std::set<std::uint64_t> done;
        const auto p = o_.out / "results.jsonl";
        std::ifstream f(p);
        std::string line, kept;
        bool cut = false;
        while (std::getline(f, line)) {
            try {
                const auto j = nlohmann::json::parse(line);
                if (!detail::is_result_line(j)) throw error("results.jsonl", "not a result line");
                const auto i = j.at("index").get<std::uint64_t>();
                if (i >= o_.first && i < o_.first + o_.count && (i - o_.first) % o_.shard_count == o_.shard_index) {
                    done.insert(i);
                    if (lines) lines->insert_or_assign(i, j);
                }
                kept += line + "\n";
            } catch (const std::exception&) {
                cut = true;
            }
        }
        f.close();
        if (cut) {  // rewrite without the partial line
            std::ofstream w(p, std::ios::trunc);
            w << kept;
        }
        return done;
    }

    void record(const nlohmann::json& line, std::chrono::steady_clock::time_point start,
                const std::function<void(const campaign_progress&)>& on_progress) {
        std::lock_guard lock(mutex_);
        journal_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        journal_.flush();
        ++progress_.done;
        for (const auto& [name, r] : line["backends"].items()) ++progress_.outcomes[r["outcome"].get<std::string>()];
        for (const auto& s : line["signatures"]) seen_signatures_.insert(s["id"].get<std::string>());
        progress_.signatures = seen_signatures_.size();
        if (o_.guide.mode != guide_mode::none) round_lines_.insert_or_assign(line["index"].get<std::uint64_t>(), line);
        progress_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (on_progress) on_progress(progress_);
    }

    // --- one case --------------------------------------------------------------
    using backend_result = case_judge::backend_result;

    nlohmann::json run_case(detail::lane& lane, std::uint64_t index) {
        const auto case_start = std::chrono::steady_clock::now();
        nlohmann::json line;
        line["case"] = io::case_id(o_.seed, index);
        line["index"] = index;
        line["signatures"] = nlohmann::json::array();
        line["backends"] = nlohmann::json::object();
        io::generated_case c;
        try {
            gen::generation_stats stats;
            std::optional<io::generated_case> derived;
            if (o_.guide.mode != guide_mode::none) {
                // The corpus is only read during a round (end_round changes it).
                const auto plan = corpus_.plan(o_.seed, index);
                std::string why;
                derived = derive_case(gen_, corpus_, plan, o_.seed, index, stats, why);
                if (!derived && plan.by != derivation_plan::kind::fresh) line["derivation_failed"] = why;
            }
            c = derived ? std::move(*derived) : io::make_case(gen_, o_.seed, index, stats);
        } catch (const memory_error& e) {
            // The reference cannot afford the case within the memory budget: not a
            // backend's failure, and not the generator's.
            line["reference_skipped"] = e.what();
            return line;
        } catch (const std::exception& e) {
            line["generation_error"] = e.what();
            return line;
        }
        if (!c.derivation.is_null()) line["derivation"] = c.derivation;
        line["nodes"] = c.model.nodes.size();
        line["ops"] = c.op_types;
        if (!c.motifs.empty()) line["motifs"] = c.motifs;
        // The reference's own time on the case: the baseline of the report's speedup scores.
        const auto ref_start = std::chrono::steady_clock::now();
        try {
            (void)graph::run(c.model, c.inputs);
            line["reference_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - ref_start).count();
        } catch (const std::exception&) {
            // A case whose search failed may hold an integer division by zero: no baseline.
        }
        const auto e = judge_.evaluate(lane, c);
        const auto& results = e.results;
        // Signatures (before any reduction), then the record.
        for (std::size_t b = 0; b < results.size(); ++b) {
            const auto& r = results[b];
            nlohmann::json jr{{"outcome", to_string(r.outcome)},
                              {"detail", r.detail},
                              {"seconds", r.run.process.seconds},
                              {"graphnet_error_code", graphnet_error_code(r.outcome)}};
            if (r.run.status == run_status::ran) {
                jr["max_abs_error"] = r.judged.max_abs_error;
                jr["max_rel_error"] = r.judged.max_rel_error;
                if (r.judged.min_passing_level) jr["min_passing_level"] = *r.judged.min_passing_level;
                if (r.judged.passing_level) jr["passing_level"] = *r.judged.passing_level;
            }
            if (r.rewrites) {
                jr["rewrites"] = nlohmann::json::array();
                for (const auto& ev : *r.rewrites) jr["rewrites"].push_back(ev.json());
            }
            if (r.sig) {
                jr["signature"] = r.sig->id();
                line["signatures"].push_back(r.sig->json());
            }
            line["backends"][lane.backends[b]->name()] = jr;
        }
        for (const auto& s : e.pair_signatures) line["signatures"].push_back(s.json());
        if (!e.pairs.empty()) line["pairs"] = e.pairs;
        if (!e.truth_note.empty()) line["float64_oracle"] = e.truth_note;
        if (!line["signatures"].empty()) save_failing_case(c, lane, lane.scratch, results, line);
        if (o_.mutants > 0) run_mutants(lane, c, e, line);
        line["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start).count();
        // A case that may join the corpus at the round's end is kept on disk until then
        // (a resumed campaign replays its rounds from the journal and these folders).
        if (o_.guide.mode != guide_mode::none && corpus_.novel(case_features(line))) {
            c.values.clear();
            io::write_case(c, o_.out / "corpus");
        }
        return line;
    }

    /// A guided round is over: its lines (journaled before or just now) update the
    /// corpus in index order; candidates not kept leave corpus/.
    void end_round(const std::vector<std::uint64_t>& round, std::map<std::uint64_t, nlohmann::json>& journaled) {
        std::vector<const nlohmann::json*> lines;
        for (const auto i : round) {
            if (const auto it = journaled.find(i); it != journaled.end()) {
                lines.push_back(&it->second);
            } else if (const auto jt = round_lines_.find(i); jt != round_lines_.end()) {
                lines.push_back(&jt->second);
            }
        }
        const auto folder = [&](const std::string& id) { return o_.out / "corpus" / id; };
        const auto kept = corpus_.absorb(lines, [&](const std::string& id) -> std::optional<io::generated_case> {
            if (!std::filesystem::exists(folder(id) / "model.onnx")) return std::nullopt;
            try {
                return read_corpus_case(folder(id));
            } catch (const std::exception&) {
                return std::nullopt;  // a folder cut by a kill: not kept
            }
        });
        const std::set<std::string> keep(kept.begin(), kept.end());
        for (const auto* l : lines) {
            const auto id = l->at("case").get<std::string>();
            std::error_code ec;
            if (!keep.contains(id)) std::filesystem::remove_all(folder(id), ec);
        }
        for (const auto i : round) {
            journaled.erase(i);
            round_lines_.erase(i);
        }
        detail::write_json(o_.out / "corpus.json", corpus_.json());
    }

    // --- metamorphic oracle ----------------------------------------------------
    /// Mutant `k` of case `c`: its chain is a pure function of the case and k.
    [[nodiscard]] std::optional<mutate::mutant> make_mutant(const io::generated_case& c, std::size_t k, nlohmann::json& jm) const {
        const auto seed = fnv1a(io::case_id(c.seed, c.index) + "/mutant/" + std::to_string(k));
        auto mo = o_.mutation;
        mo.steps = 1 + static_cast<std::size_t>(seed % std::max<std::size_t>(1, o_.mutation_max_steps));
        try {
            auto m = mutate::mutate_graph(c.model, c.inputs, seed, mo);
            if (!m) jm["skipped"] = "no place to apply the allowed mutations";
            return m;
        } catch (const std::exception& e) {
            jm["skipped"] = std::string("mutation failed: ") + e.what();
            return std::nullopt;
        }
    }

    /// Runs each mutant of `c` on the lane's backends and compares every backend with
    /// itself on the original (the metamorphic oracle); failures get signatures with
    /// oracle "metamorphic", and the mutant's own backend-vs-backend disagreements are
    /// kept where the original had none.
    void run_mutants(detail::lane& lane, const io::generated_case& c, const case_judge::evaluation& e, nlohmann::json& line) {
        line["mutants"] = nlohmann::json::array();
        const auto original_ops = graph::op_types(c.model);
        for (std::size_t k = 0; k < o_.mutants; ++k) {
            const std::string id = io::case_id(c.seed, c.index) + "_m" + std::to_string(k);
            nlohmann::json jm{{"k", k}, {"case", id}};
            const auto m = make_mutant(c, k, jm);
            if (!m) {
                line["mutants"].push_back(jm);
                continue;
            }
            jm["chain"] = m->chain_text();
            jm["class"] = std::string(mutate::to_string(m->numeric));
            // A mutant ONNX would refuse is a fault of a mutation, not of a backend: recorded, not run.
            const auto mc = mutate::as_case(c, *m);
            if (const auto problem = mutate::onnx_problem(mc.model, mc.values); !problem.empty()) {
                jm["skipped"] = "the mutant is not a valid ONNX model (a fault of the mutation, please report it): " + problem;
                line["mutants"].push_back(jm);
                continue;
            }
            bool new_ops = false;
            for (const auto& op : graph::op_types(m->model)) new_ops |= original_ops.count(op) == 0;
            // The mutant runs in a scratch folder of its own: the original's outputs stay for its record.
            struct scratch_swap {
                detail::lane& l;
                std::filesystem::path saved;
                ~scratch_swap() { l.scratch = saved; }
            } swap{lane, lane.scratch};
            lane.scratch = swap.saved / "mutant";
            const auto em = judge_.evaluate(lane, mc);
            std::vector<signature> found;
            for (std::size_t b = 0; b < em.results.size(); ++b) {
                const auto& r0 = e.results[b];
                const auto& r1 = em.results[b];
                std::string outcome;
                std::string detail;
                std::optional<outcome_class> failure;
                if (r0.run.status != run_status::ran || is_failure(r0.outcome)) {
                    outcome = "not_compared";
                    detail = "the original " + std::string(r0.run.status != run_status::ran ? "did not run" : "failed on its own");
                } else if (r1.run.status != run_status::ran) {
                    if (r1.run.status == run_status::unsupported && new_ops) {
                        outcome = "unsupported";  // the mutant uses an op the backend lacks
                    } else {
                        failure = r1.outcome == outcome_class::unsupported ? outcome_class::compile_failure : r1.outcome;
                    }
                    detail = r1.detail;
                } else {
                    const auto j = detail::judge_outputs(r1.run.outputs, r0.run.outputs, o_.level);
                    detail = j.detail;
                    auto acceptable = [](outcome_class x) { return x == outcome_class::pass || x == outcome_class::reference_precision; };
                    if (j.outcome == outcome_class::pass) {
                        outcome = "pass";
                    } else if (acceptable(r0.outcome) && acceptable(r1.outcome)) {
                        outcome = "reference_precision";  // both within the reference's tolerance: rounding, no one's bug
                    } else {
                        failure = j.outcome;
                    }
                }
                nlohmann::json jb{{"detail", detail}};
                if (failure) {
                    outcome = std::string(to_string(*failure));
                    signature s{lane.backends[b]->name(), *failure, "metamorphic", "mutation " + m->chain_text()};
                    if (r1.sig && r1.sig->where.rfind("op ", 0) == 0) s.where += ": " + r1.sig->where;
                    auto js = s.json();
                    js["case"] = id;
                    js["nodes"] = m->model.nodes.size();
                    if (r1.sig) js["reduce_as"] = r1.sig->id();  // the mutant's own failure, reducible alone
                    line["signatures"].push_back(js);
                    jb["signature"] = s.id();
                    found.push_back(s);
                }
                jb["outcome"] = outcome;
                jm["backends"][lane.backends[b]->name()] = jb;
            }
            // The mutant's disagreements between configurations, where the original's pair agreed.
            for (const auto& s : em.pair_signatures) {
                const auto it = e.pairs.find(s.backend);
                if (it != e.pairs.end() && it->contains("signature")) continue;
                auto js = s.json();
                js["case"] = id;
                js["nodes"] = m->model.nodes.size();
                line["signatures"].push_back(js);
                found.push_back(s);
            }
            if (!em.pairs.empty()) jm["pairs"] = em.pairs;
            if (!found.empty()) save_failing_mutant(c, *m, id, lane, em, jm);
            line["mutants"].push_back(jm);
        }
    }

    void save_failing_mutant(const io::generated_case& c, const mutate::mutant& m, const std::string& id, const detail::lane& lane,
                             const case_judge::evaluation& em, const nlohmann::json& jm) const {
        auto info = mutate::mutation_json(m, 0, io::case_id(c.seed, c.index));
        const auto folder = mutate::write_mutant(c, m, o_.out / "cases", id, info);
        nlohmann::json rj = jm;
        for (std::size_t b = 0; b < em.results.size(); ++b) {
            const auto& name = lane.backends[b]->name();
            auto& jb = rj["backends"][name];
            jb["stderr"] = em.results[b].run.process.err;
            jb["exit_code"] = em.results[b].run.process.exit_code;
            jb["signal"] = em.results[b].run.process.signal;
            jb["reference_outcome"] = to_string(em.results[b].outcome);
            if (em.results[b].run.status == run_status::ran) {
                const auto to = folder / "backends" / name;
                std::error_code ec;
                std::filesystem::create_directories(to, ec);
                std::filesystem::copy(lane.scratch / ("out_" + std::to_string(b)), to, std::filesystem::copy_options::overwrite_existing | std::filesystem::copy_options::recursive, ec);
            }
        }
        detail::write_json(folder / "result.json", rj);
    }

    void save_failing_case(const io::generated_case& c, detail::lane& lane, const std::filesystem::path& dir, const std::vector<backend_result>& results,
                           const nlohmann::json& line) const {
        const auto folder = io::write_case(c, o_.out / "cases");
        nlohmann::json rj = line;
        for (std::size_t b = 0; b < results.size(); ++b) {
            const auto& name = lane.backends[b]->name();
            auto& jb = rj["backends"][name];
            jb["stdout"] = results[b].run.process.out;
            jb["stderr"] = results[b].run.process.err;
            jb["exit_code"] = results[b].run.process.exit_code;
            jb["signal"] = results[b].run.process.signal;
            if (results[b].run.status == run_status::ran) {
                const auto to = folder / "backends" / name;
                std::error_code ec;
                std::filesystem::create_directories(to, ec);
                std::filesystem::copy(dir / ("out_" + std::to_string(b)), to, std::filesystem::copy_options::overwrite_existing | std::filesystem::copy_options::recursive, ec);
            }
        }
        detail::write_json(folder / "result.json", rj);
    }

    // --- summary ---------------------------------------------------------------
    nlohmann::json write_summary() const {
        summary_scope sc;
        sc.dir = o_.out;
        for (const auto& p : prototypes_) sc.backends.push_back(p->name());
        const auto first = o_.first, count = o_.count, index = o_.shard_index, shards = o_.shard_count;
        sc.includes = [=](std::uint64_t i) { return i >= first && i < first + count && (i - first) % shards == index; };
        sc.requested = shard_size(o_.count, o_.shard_index, o_.shard_count);
        sc.level = o_.level;
        sc.seed = o_.seed;
        sc.config_hash = o_.config.hash();
        sc.mutants = o_.mutants > 0;
        sc.known = o_.known;
        if (o_.shard_count > 1) sc.shard = {{"index", o_.shard_index}, {"count", o_.shard_count}};
        return campaign::write_summary(sc);
    }

public:
    /// What the backends reported they rewrote: per backend, its kinds by cases
    /// (optimizations first; insertions, layout changes and expansions after them).
    [[nodiscard]] static std::string rewrite_text(const nlohmann::json& rewrites, std::size_t rows = 40) {
        std::ostringstream os;
        for (const auto& [name, t] : rewrites.items()) {
            os << "\nrewrites by " << name << ": " << t["rewritten"].get<std::size_t>() << " of " << t["reported"].get<std::size_t>()
               << " reported graphs changed by an optimization, " << t.value("optimization_kinds", std::size_t{0})
               << " optimization kinds (fusion, elimination, folding, replacement)\n";
            std::size_t shown = 0;
            for (const auto& k : t["kinds"]) {
                if (shown++ == rows) {
                    os << "  ... " << t["kinds"].size() - rows << " more kinds in summary.json\n";
                    break;
                }
                char buf[48];
                std::snprintf(buf, sizeof buf, "  %6zu cases  %-12s", k["cases"].get<std::size_t>(), k["class"].get<std::string>().c_str());
                os << buf << k["kind"].get<std::string>() << "  (first: case " << k["first_case"].get<std::string>() << ")\n";
            }
        }
        return os.str();
    }

    /// The readable summary: one outcome table, then the signatures.
    [[nodiscard]] static std::string summary_text(const nlohmann::json& s) {
        std::ostringstream os;
        os << "tensoracle campaign: " << s["cases"].get<std::size_t>() << " of " << s["requested"].get<std::uint64_t>()
           << " cases (seed " << s["seed"].get<std::uint64_t>() << ", config " << s["config_hash"].get<std::string>() << ", level "
           << s["level"].get<double>() << ")\n";
        if (s["generation_errors"].get<std::size_t>() > 0) os << "generation errors: " << s["generation_errors"].get<std::size_t>() << "\n";
        if (s.value("reference_skipped", std::size_t{0}) > 0) {
            os << "reference_skipped: " << s["reference_skipped"].get<std::size_t>() << " (over the memory budget, --memory-limit)\n";
        }
        if (s.contains("rewrites")) os << rewrite_text(s["rewrites"]);
        if (s.contains("guide")) {
            const auto& g = s["guide"];
            os << "\nguided by rewrites: " << g.value("features", std::size_t{0}) << " features";
            if (g.contains("corpus")) os << ", corpus of " << g["corpus"].get<std::size_t>() << " cases";
            os << "; new features per 100 cases:";
            for (const auto& [how, b] : g["by"].items()) {
                const auto n = b["cases"].get<std::size_t>();
                char buf[96];
                std::snprintf(buf, sizeof buf, " %s %.1f (%zu cases)", how.c_str(), n ? 100.0 * static_cast<double>(b["new_features"].get<std::size_t>()) / static_cast<double>(n) : 0.0, n);
                os << buf;
            }
            os << "\n";
        }
        auto table = [&](const nlohmann::json& rows, const char* title) {
            std::vector<std::string> cols;
            for (const auto c : all_outcomes) {
                bool any = false;
                for (const auto& [name, r] : rows.items()) any |= r["outcomes"].value(std::string(to_string(c)), 0) > 0;
                if (any || c == outcome_class::pass) cols.emplace_back(to_string(c));
            }
            char buf[64];
            std::snprintf(buf, sizeof buf, "%-34s", title);
            os << '\n' << buf;
            for (const auto& c : cols) {
                std::snprintf(buf, sizeof buf, " %*s", static_cast<int>(std::max<std::size_t>(c.size(), 5)), c.c_str());
                os << buf;
            }
            os << '\n';
            for (const auto& [name, r] : rows.items()) {
                std::snprintf(buf, sizeof buf, "%-34s", name.c_str());
                os << buf;
                for (const auto& c : cols) {
                    std::snprintf(buf, sizeof buf, " %*zu", static_cast<int>(std::max<std::size_t>(c.size(), 5)), r["outcomes"].value(c, std::size_t{0}));
                    os << buf;
                }
                os << '\n';
            }
        };
        table(s["backends"], "backend");
        if (s.contains("pairs")) table(s["pairs"], "backend vs backend");
        if (s.contains("metamorphic")) {
            const auto invalid = s["mutants"].value("invalid", std::size_t{0});
            os << "\nmutants: " << s["mutants"]["run"].get<std::size_t>() << " run, " << s["mutants"]["skipped"].get<std::size_t>() - invalid
               << " skipped (no place to apply the mutations)";
            if (invalid > 0) os << ", " << invalid << " not valid for ONNX (a fault of a mutation: results.jsonl says which)";
            os << "\n";
            // Outcome names of the metamorphic oracle that are not outcome classes.
            nlohmann::json rows = s["metamorphic"];
            table(rows, "metamorphic (mutant vs original)");
            for (const auto& [name, r] : rows.items()) {
                for (const char* extra : {"not_compared"}) {
                    if (r["outcomes"].value(extra, std::size_t{0}) > 0) os << "  " << name << ": " << r["outcomes"][extra].get<std::size_t>() << " " << extra << "\n";
                }
            }
            if (s.contains("mutant_pairs")) table(s["mutant_pairs"], "backend vs backend on mutants");
        }
        os << "\nsignatures: " << s["signatures"].size();
        if (s.contains("triage")) {
            os << " (" << s["triage"].value("new", 0) << " new, " << s["triage"].value("known", 0) << " known, ";
            if (s["triage"].value("judged", 0) > 0) os << s["triage"].value("judged", 0) << " judged not bugs, ";
            os << s["triage"].value("limitation", 0) << " limitations: valid models a system refuses)";
        }
        os << "\n";
        std::map<std::string, std::size_t> limitations;  // collapsed: "backend outcome" -> cases
        for (const auto& g : s["signatures"]) {
            const auto label = g.value("triage", std::string("new"));
            if (label == "limitation") {
                limitations[g["backend"].get<std::string>() + " " + g["outcome"].get<std::string>()] += g["count"].get<std::size_t>();
                continue;
            }
            os << "  " << (label == "known" ? "known  " : label == "judged" ? "judged " : "NEW    ") << g["id"].get<std::string>() << "  " << g["count"].get<std::size_t>() << "x  " << g["backend"].get<std::string>() << "  "
               << g["outcome"].get<std::string>() << "  " << g["where"].get<std::string>() << "  (smallest: cases/" << g["case"].get<std::string>()
               << ", " << g["case_nodes"].get<std::size_t>() << " nodes)" << (g.contains("finding") ? "  finding " + g["finding"].get<std::string>() : std::string()) << "\n";
            if (g.contains("bundle")) {
                os << "      reduced to " << g["reduced_nodes"].get<std::size_t>() << " node(s): " << g["bundle"].get<std::string>() << "/\n";
            } else if (g.contains("reduction")) {
                os << "      " << g["reduction"].get<std::string>() << "\n";
            }
        }
        if (!limitations.empty()) {
            os << "  limitations (signatures collapsed, cases):";
            for (const auto& [what, n] : limitations) os << "  " << what << " " << n;
            os << "\n";
        }
        return os.str();
    }

private:
    campaign_options o_;
    case_judge judge_;
    gen::generator gen_;
    std::vector<std::unique_ptr<backend>> prototypes_;
    std::mutex mutex_;
    std::ofstream journal_;
    campaign_progress progress_;
    std::set<std::string> seen_signatures_;
    rewrite_corpus corpus_;
    std::map<std::uint64_t, nlohmann::json> round_lines_;  ///< a guided round's new lines, until end_round
};

/// Each signature whose reduced bundle is in `dir`/reduced/<id>/ (complete: it has its
/// manifest) names it, with its size.
inline void attach_bundles(const std::filesystem::path& dir, nlohmann::json& summary) {
    for (auto& g : summary["signatures"]) {
        const auto bundle = dir / "reduced" / g["id"].get<std::string>();
        if (!std::filesystem::exists(bundle / "manifest.json")) continue;
        std::ifstream f(bundle / "manifest.json");
        const auto m = nlohmann::json::parse(f, nullptr, false);
        if (!m.is_object() || !m.contains("reduced")) continue;
        g["bundle"] = "reduced/" + g["id"].get<std::string>();
        g["reduced_nodes"] = m["reduced"]["nodes"];
        g.erase("reduction");
    }
}

/// Groups a campaign folder's results.jsonl into summary.json and summary.txt.
inline nlohmann::json write_summary(const summary_scope& sc) {
    std::map<std::string, std::map<std::string, std::size_t>> outcomes;
    std::map<std::string, std::map<std::string, std::size_t>> pair_outcomes;
    struct group {
        nlohmann::json first;
        std::size_t count = 0;
        std::string smallest_case;
        std::size_t smallest_nodes = SIZE_MAX;
    };
    std::map<std::string, group> groups;
    // Rewrite feedback per backend: kind -> its class, the cases it fired in, the first such case.
    struct rewrite_kind {
        std::string what, first_case;  ///< the case of smallest index it fired in (jobs finish in any order)
        std::size_t cases = 0, events = 0;
        std::uint64_t first_index = UINT64_MAX;
    };
    struct rewrite_tally {
        std::size_t reported = 0, rewritten = 0;
        std::map<std::string, rewrite_kind> kinds;
    };
    std::map<std::string, rewrite_tally> rewrites;
    std::map<std::string, std::size_t> motif_cases;  ///< motif instance ("name" or "name/variant") -> cases holding one
    // Guided campaigns: each case's derivation and features, to count what each way of making cases found first.
    std::vector<std::tuple<std::uint64_t, std::string, std::vector<std::string>>> derivations;
    bool guided = false;
    std::size_t cases = 0, generation_errors = 0, reference_skipped = 0, mutants = 0, mutants_skipped = 0, mutants_invalid = 0;
    std::map<std::string, std::map<std::string, std::size_t>> metamorphic, mutant_pair_outcomes;
    double seconds = 0.0;
    std::set<std::uint64_t> seen_index;
    for (const auto& b : sc.backends) {
        for (const auto c : all_outcomes) outcomes[b][std::string(to_string(c))] = 0;
    }
    std::ifstream f(sc.dir / "results.jsonl");
    std::string text;
    while (std::getline(f, text)) {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text);
        } catch (const std::exception&) {
            continue;
        }
        if (!detail::is_result_line(j)) continue;
        const auto i = j.value("index", std::uint64_t{0});
        if (!sc.includes(i) || !seen_index.insert(i).second) continue;
        ++cases;
        seconds += j.value("seconds", 0.0);
        if (j.contains("generation_error")) ++generation_errors;
        if (j.contains("reference_skipped")) ++reference_skipped;
        guided = guided || j.contains("derivation");
        derivations.emplace_back(i, j.contains("derivation") ? j["derivation"].value("by", std::string("fresh")) : std::string("fresh"), case_features(j));
        if (j.contains("motifs")) {
            std::set<std::string> seen;
            for (const auto& m : j["motifs"]) {
                if (seen.insert(m.get<std::string>()).second) ++motif_cases[m.get<std::string>()];
            }
        }
        for (const auto& [name, r] : j["backends"].items()) {
            ++outcomes[name][r["outcome"].get<std::string>()];
            if (!r.contains("rewrites")) continue;
            auto& t = rewrites[name];
            ++t.reported;
            std::set<std::string> seen;
            bool optimized = false;
            for (const auto& ev : r["rewrites"]) {
                const auto kind = ev.value("kind", std::string());
                auto& k = t.kinds[kind];
                k.what = ev.value("class", std::string());
                ++k.events;
                const auto what = rewrite_class_named(k.what);
                optimized = optimized || (what && is_optimization(*what));
                if (!seen.insert(kind).second) continue;
                ++k.cases;
                if (i < k.first_index) {
                    k.first_index = i;
                    k.first_case = j.value("case", std::string());
                }
            }
            if (optimized) ++t.rewritten;
        }
        if (j.contains("pairs")) {
            for (const auto& [name, r] : j["pairs"].items()) ++pair_outcomes[name][r["outcome"].get<std::string>()];
        }
        if (j.contains("mutants")) {
            for (const auto& jm : j["mutants"]) {
                ++mutants;
                if (jm.contains("skipped")) {
                    ++mutants_skipped;
                    if (jm["skipped"].get<std::string>().rfind("the mutant is not a valid", 0) == 0) ++mutants_invalid;
                    continue;
                }
                for (const auto& [name, r] : jm["backends"].items()) ++metamorphic[name][r["outcome"].get<std::string>()];
                if (jm.contains("pairs")) {
                    for (const auto& [name, r] : jm["pairs"].items()) ++mutant_pair_outcomes[name][r["outcome"].get<std::string>()];
                }
            }
        }
        for (const auto& s : j["signatures"]) {
            auto& g = groups[s["id"].get<std::string>()];
            if (g.count++ == 0) g.first = s;
            // A mutant's signature names the mutant's folder and size.
            const std::size_t nodes = s.value("nodes", j.value("nodes", std::size_t{0}));
            const auto id = s.value("case", j["case"].get<std::string>());
            if (nodes < g.smallest_nodes || (nodes == g.smallest_nodes && id < g.smallest_case)) {
                g.smallest_nodes = nodes;
                g.smallest_case = id;
            }
        }
    }
    nlohmann::json s;
    s["schema"] = "tensoracle.campaign.summary/1";
    s["cases"] = cases;
    s["requested"] = sc.requested;
    s["generation_errors"] = generation_errors;
    s["reference_skipped"] = reference_skipped;
    s["case_seconds"] = seconds;
    s["level"] = sc.level;
    s["seed"] = sc.seed;
    s["config_hash"] = sc.config_hash;
    if (!sc.shard.is_null()) s["shard"] = sc.shard;
    if (guided || std::filesystem::exists(sc.dir / "corpus.json")) {
        // What each way of making cases found first, in index order: a feature (rewrite
        // kind, kind set, outcome, signature; campaign/corpus.hpp) counts for the case of
        // smallest index that showed it.
        std::sort(derivations.begin(), derivations.end());
        std::set<std::string> seen;
        nlohmann::json by = nlohmann::json::object();
        for (const auto& [index, how, features] : derivations) {
            auto& b = by[how];
            if (b.is_null()) b = {{"cases", 0}, {"new_features", 0}};
            b["cases"] = b["cases"].get<std::size_t>() + 1;
            std::size_t fresh = 0;
            for (const auto& feature : features) fresh += seen.insert(feature).second ? 1 : 0;
            b["new_features"] = b["new_features"].get<std::size_t>() + fresh;
        }
        s["guide"]["by"] = by;
        s["guide"]["features"] = seen.size();
        if (std::filesystem::exists(sc.dir / "corpus.json")) {
            try {
                std::ifstream cf(sc.dir / "corpus.json");
                const auto cj = nlohmann::json::parse(cf);
                s["guide"]["corpus"] = cj.at("entries").size();
                s["guide"]["mode"] = cj.at("guide").value("mode", std::string("rewrites"));
            } catch (const std::exception&) {
                // a corpus.json cut by a kill: the counts above still hold
            }
        }
    }
    for (const auto& [name, m] : outcomes) s["backends"][name]["outcomes"] = m;
    for (const auto& [name, m] : pair_outcomes) s["pairs"][name]["outcomes"] = m;
    for (const auto& [name, t] : rewrites) {
        std::vector<std::pair<std::string, const rewrite_kind*>> kinds;
        for (const auto& [kind, k] : t.kinds) kinds.emplace_back(kind, &k);
        // Optimizations first (what rewrite reach counts), then by how many cases each fired in.
        auto rank = [](const rewrite_kind& k) {
            const auto what = rewrite_class_named(k.what);
            return what && !is_optimization(*what) ? 1 : 0;
        };
        std::sort(kinds.begin(), kinds.end(), [&](const auto& x, const auto& y) {
            if (rank(*x.second) != rank(*y.second)) return rank(*x.second) < rank(*y.second);
            return x.second->cases != y.second->cases ? x.second->cases > y.second->cases : x.first < y.first;
        });
        nlohmann::json jt{{"reported", t.reported}, {"rewritten", t.rewritten}, {"kinds", nlohmann::json::array()}};
        std::size_t optimization_kinds = 0;
        for (const auto& [kind, k] : kinds) {
            optimization_kinds += rank(*k) == 0 ? 1 : 0;
            jt["kinds"].push_back({{"kind", kind}, {"class", k->what}, {"cases", k->cases}, {"events", k->events}, {"first_case", k->first_case}});
        }
        jt["optimization_kinds"] = optimization_kinds;
        s["rewrites"][name] = jt;
    }
    if (!motif_cases.empty()) s["motifs"] = motif_cases;
    if (sc.mutants) {
        s["mutants"] = {{"run", mutants - mutants_skipped}, {"skipped", mutants_skipped}, {"invalid", mutants_invalid}};
        for (const auto& [name, m] : metamorphic) s["metamorphic"][name]["outcomes"] = m;
        for (const auto& [name, m] : mutant_pair_outcomes) s["mutant_pairs"][name]["outcomes"] = m;
    }
    // Triage: new wrong results first, then other new failures, known findings, limitations;
    // by count within each.
    for (auto& [id, g] : groups) {
        g.first["id"] = id;
        g.first["triage"] = triage_label(g.first, sc.known);
    }
    std::vector<std::pair<std::string, const group*>> sorted;
    for (const auto& [id, g] : groups) sorted.emplace_back(id, &g);
    std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
        const int rx = triage_rank(x.second->first), ry = triage_rank(y.second->first);
        if (rx != ry) return rx < ry;
        return x.second->count != y.second->count ? x.second->count > y.second->count : x.first < y.first;
    });
    s["signatures"] = nlohmann::json::array();
    std::map<std::string, std::size_t> triage_counts{{"new", 0}, {"known", 0}, {"judged", 0}, {"limitation", 0}};
    for (const auto& [id, g] : sorted) {
        const auto label = g->first["triage"].get<std::string>();
        ++triage_counts[label];
        s["signatures"].push_back({{"id", id},
                                   {"triage", label},
                                   {"backend", g->first["backend"]},
                                   {"outcome", g->first["outcome"]},
                                   {"oracle", g->first["oracle"]},
                                   {"where", g->first["where"]},
                                   {"count", g->count},
                                   {"case", g->smallest_case},
                                   {"case_nodes", g->smallest_nodes}});
        if (g->first.contains("reduce_as")) s["signatures"].back()["reduce_as"] = g->first["reduce_as"];
        if (label == "known" || label == "judged") s["signatures"].back()["finding"] = sc.known.by_signature.at(id);
    }
    s["triage"] = triage_counts;
    attach_bundles(sc.dir, s);
    detail::write_json(sc.dir / "summary.json", s);
    std::ofstream t(sc.dir / "summary.txt");
    t << campaign_runner::summary_text(s);
    return s;
}

/// Runs (or resumes) a campaign; see campaign_runner.
inline nlohmann::json run_campaign(campaign_options o, std::vector<std::unique_ptr<backend>> backends,
                                   const std::function<void(const campaign_progress&)>& on_progress = {},
                                   const std::atomic<bool>* stop = nullptr) {
    campaign_runner r(std::move(o), std::move(backends));
    return r.run(on_progress, stop);
}

}  // namespace tensoracle::campaign
// ---- end tensoracle/campaign/campaign.hpp ----
// ---- begin tensoracle/campaign/probe.hpp ----
// tensoracle: support probing (NNSmith's single-op trials). Before a campaign each
// backend runs single-op cases per (op, dtype of the op's first input), a few
// variants each (other shapes and attributes from the generator). A pair every
// variant of which the backend calls `unsupported` is left out of the campaign's
// generation (config::support): unsupported is a fact to report, not a bug.
// Anything else the backend does with a pair (runs it, fails to compile it,
// crashes) keeps it in, so refusals of valid models stay findings.
//
// Results are cached per backend and version (its description: ONNX Runtime's and
// OpenCV's versions, or a command's words and its executable's size and time):
// `${XDG_CACHE_HOME:-~/.cache}/tensoracle/support/<name>-<hash>.json`, so a new
// version is probed again. Needs ONNX (case files) and nlohmann/json.

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>


namespace tensoracle::campaign {

/// What probing found for one backend: (op, dtype) -> "supported", "unsupported" or
/// "not generated" (the generator could not make that pair alone under the config).
struct support_table {
    std::string backend, description;
    std::map<std::string, std::map<dtype, std::string>> pairs;
    std::size_t runs = 0;  ///< backend runs this probe took (0: all from the cache)

    [[nodiscard]] bool supports(const std::string& op, dtype d) const {
        const auto it = pairs.find(op);
        if (it == pairs.end()) return true;
        const auto jt = it->second.find(d);
        return jt == it->second.end() || jt->second != "unsupported";
    }
    [[nodiscard]] nlohmann::json json() const {
        nlohmann::json ops = nlohmann::json::object(), unsupported = nlohmann::json::object();
        for (const auto& [op, m] : pairs) {
            for (const auto& [d, what] : m) {
                if (what == "supported") ops[op].push_back(std::string(name(d)));
                if (what == "unsupported") unsupported[op].push_back(std::string(name(d)));
            }
            if (!ops.contains(op)) ops[op] = nlohmann::json::array();
        }
        return {{"description", description}, {"ops", ops}, {"unsupported", unsupported}, {"probe_runs", runs}};
    }
};

struct probe_options {
    std::size_t variants = 2;  ///< single-op cases per (op, dtype)
    double timeout_seconds = 10.0;
    std::filesystem::path cache_dir;        ///< empty: the default cache folder
    std::filesystem::path scratch;          ///< where probe cases are written (required)
    bool use_cache = true;
};

/// The default cache folder: $XDG_CACHE_HOME/tensoracle/support or ~/.cache/tensoracle/support.
[[nodiscard]] inline std::filesystem::path default_support_cache() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "tensoracle" / "support";
    if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "tensoracle" / "support";
    return std::filesystem::temp_directory_path() / "tensoracle-support-cache";
}

/// Probes backend `b` (described by `description`, its version included) on every op of
/// `config` (its include/exclude list, dtypes and opset), in the cache first.
inline support_table probe_support(backend& b, const std::string& description, const gen::config& config, const probe_options& o,
                                   const std::function<void(std::size_t, std::size_t)>& on_progress = {}) {
    const char* where = "tensoracle::campaign::probe_support";
    if (o.scratch.empty()) throw error(where, "no scratch folder");
    support_table t;
    t.backend = b.name();
    t.description = description;
    const auto cache_dir = o.cache_dir.empty() ? default_support_cache() : o.cache_dir;
    const auto cache = cache_dir / (b.name() + "-" + fnv1a_hex(description + "|" + std::string(version_string)) + ".json");
    nlohmann::json cached = nlohmann::json::object();
    if (o.use_cache && std::filesystem::exists(cache)) {
        std::ifstream f(cache);
        cached = nlohmann::json::parse(f, nullptr, false);
        if (!cached.is_object()) cached = nlohmann::json::object();
    }
    // The pairs to know: each op the config draws, each of the config's dtypes its first input takes.
    std::vector<std::pair<std::string, dtype>> todo;
    for (const auto& e : ops::registry()) {
        const std::string op(e.op_type);
        if (!config.include_ops.empty() && std::find(config.include_ops.begin(), config.include_ops.end(), op) == config.include_ops.end()) continue;
        if (std::find(config.exclude_ops.begin(), config.exclude_ops.end(), op) != config.exclude_ops.end()) continue;
        for (const auto d : config.dtypes) {
            if (!e.inputs.empty() && !e.inputs[0].types.contains(d)) continue;
            todo.emplace_back(op, d);
        }
    }
    detail::lane lane;
    lane.backends.push_back(b.clone());
    lane.scratch = o.scratch;
    const case_judge judge(judge_options{-4.0, o.timeout_seconds, false, false, false, false});
    std::size_t done = 0;
    for (const auto& [op, d] : todo) {
        const std::string key = op + "/" + std::string(name(d));
        if (cached.contains(key)) {
            t.pairs[op][d] = cached[key].get<std::string>();
            if (on_progress) on_progress(++done, todo.size());
            continue;
        }
        gen::config one = config;
        one.include_ops = {op};
        one.exclude_ops.clear();
        one.support = {{op, {d}}};
        // The op's values in that dtype, and int64 for shape-like inputs (Reshape's shape, axes).
        one.dtypes = {d};
        if (d != dtype::i64) one.dtypes.push_back(dtype::i64);
        one.max_nodes = 1;
        one.search_attempts = 2;
        std::string verdict = "not generated";
        try {
            const gen::generator gen(one);
            bool any = false, all_unsupported = true;
            for (std::size_t v = 0; v < o.variants; ++v) {
                gen::generation_stats stats;
                io::generated_case c;
                try {
                    c = io::make_case(gen, 0x5eed, v, stats);
                } catch (const error&) {
                    continue;
                }
                if (std::find(c.op_types.begin(), c.op_types.end(), op) == c.op_types.end()) continue;  // the op did not fit
                any = true;
                const auto e = judge.evaluate(lane, c);
                ++t.runs;
                all_unsupported = all_unsupported && e.results[0].run.status == run_status::unsupported;
            }
            if (any) verdict = all_unsupported ? "unsupported" : "supported";
        } catch (const backend_unavailable&) {
            throw;
        } catch (const error&) {
            // The config cannot draw this op alone (a rank or an element limit): nothing to ask the backend.
        }
        t.pairs[op][d] = verdict;
        cached[key] = verdict;
        if (on_progress) on_progress(++done, todo.size());
    }
    std::error_code ec;
    std::filesystem::create_directories(cache_dir, ec);
    cached["__description"] = description;
    if (!ec) detail::write_json(cache, cached);
    return t;
}

/// The generator's support table from the backends' probes: a pair is drawn when some
/// backend accepts it (so none loses coverage; the others report it unsupported).
[[nodiscard]] inline std::map<std::string, std::set<dtype>> combined_support(const std::vector<support_table>& tables, const gen::config& config) {
    std::map<std::string, std::set<dtype>> out;
    std::set<std::string> ops;
    for (const auto& t : tables) {
        for (const auto& [op, m] : t.pairs) ops.insert(op);
    }
    for (const auto& op : ops) {
        std::set<dtype> ds;
        for (const auto d : config.dtypes) {
            bool known = false, accepted = false;
            for (const auto& t : tables) {
                const auto it = t.pairs.find(op);
                if (it == t.pairs.end() || !it->second.count(d)) continue;
                known = true;
                accepted = accepted || it->second.at(d) != "unsupported";
            }
            if (!known || accepted) ds.insert(d);
        }
        out[op] = ds;
    }
    return out;
}

}  // namespace tensoracle::campaign
// ---- end tensoracle/campaign/probe.hpp ----
// ---- begin tensoracle/campaign/reduce.hpp ----
// tensoracle: test-case reduction. A failing case (graph + inputs) is made small
// while a check says it still fails the same way:
//
//   signature_check check(std::move(backends), judge_options{}, scratch);   // or command_check
//   const auto r = reduce(original, check, reduce_options{});              // r.reduced: a few nodes
//   write_bundle(r, check, "repro/");                                       // model.onnx, manifest.json, repro.cpp, README.md
//
// Passes, each repeated until nothing changes or the budget is spent:
//   1. node removal, delta-debugging style (ddmin over chunks of nodes in
//      topological order, so chunks are mostly connected), then one node at a time.
//      A removed node's consumers read a new graph input *frozen* to the value the
//      reference computed there (Polygraphy's approach), or, when that loses the
//      failure, the removed node's own input of the same type and shape;
//   2. graph outputs dropped (and the nodes only they needed);
//   3. attributes back to their defaults;
//   4. shapes: input and weight dims halved (a prefix slice), all dims of one size
//      together and then one axis at a time;
//   5. values: inputs and weights set to zeros, ones, small integers, and chunks of
//      elements zeroed, keeping the few that matter.
// Every candidate is validated (graph rules, the ops' constraints and shape
// inference, through a reference run that also gives its expected outputs) before
// the check sees it, so a reduced case is always a valid one. Candidates are tried
// in a fixed order: the same case and check give the same reduction.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>


namespace tensoracle::campaign {

using value_map = std::map<std::string, tensor, std::less<>>;

/// The case `g` fed with `inputs`, validated and evaluated by the reference: its
/// outputs, every intermediate value, and its interface's dtypes and shapes made
/// exact. Throws tensoracle::error when the graph is invalid or cannot run.
[[nodiscard]] inline io::generated_case evaluate_case(graph::graph g, value_map inputs, std::uint64_t seed = 0, std::uint64_t index = 0) {
    g.validate();
    for (auto& in : g.inputs) {
        const auto it = inputs.find(in.name);
        if (it == inputs.end()) throw error("tensoracle::campaign::evaluate_case", "no data for graph input '" + in.name + "'");
        in.type = it->second.element_dtype();
        in.shape = it->second.shape();
    }
    auto r = graph::run(g, inputs, {.record_intermediates = true});
    for (auto& out : g.outputs) {
        const auto& t = r.values.at(out.name);
        out.type = t.element_dtype();
        out.shape = t.shape();
    }
    io::generated_case c;
    c.seed = seed;
    c.index = index;
    c.values = std::move(r.values);
    for (const auto& [name, t] : g.initializers) c.values.insert_or_assign(name, t);
    for (const auto& [name, t] : inputs) c.values.insert_or_assign(name, t);
    for (const auto& out : g.outputs) c.outputs.emplace(out.name, c.values.at(out.name));
    for (const auto& n : g.nodes) c.op_types.push_back(n.op_type);
    c.model = std::move(g);
    c.inputs = std::move(inputs);
    return c;
}

namespace detail {
/// `c` in the ONNX test layout: `dir`/model.onnx, `dir`/test_data_set_0/ with
/// input_<k>.pb and our output_<k>.pb (the folder is created, not emptied).
inline void write_test_layout(const io::generated_case& c, const std::filesystem::path& dir) {
    const auto data = dir / "test_data_set_0";
    std::error_code ec;
    std::filesystem::create_directories(data, ec);
    if (ec) throw error("tensoracle::campaign::write_test_layout", "cannot create " + data.string() + ": " + ec.message());
    io::save_model(c.model, dir / "model.onnx");
    for (std::size_t k = 0; k < c.model.inputs.size(); ++k) {
        io::save_tensor(c.inputs.at(c.model.inputs[k].name), data / ("input_" + std::to_string(k) + ".pb"), c.model.inputs[k].name);
    }
    for (std::size_t k = 0; k < c.model.outputs.size(); ++k) {
        io::save_tensor(c.outputs.at(c.model.outputs[k].name), data / ("output_" + std::to_string(k) + ".pb"), c.model.outputs[k].name);
    }
}
}  // namespace detail

/// Decides whether a candidate still fails the way the original did.
class failure_check {
public:
    struct verdict {
        bool fails = false;    ///< the failure being reduced is there
        bool hang = false;     ///< the check ran past its time-out
        std::string observed;  ///< what happened, in a few words
    };
    virtual ~failure_check() = default;
    /// Runs the original once; fixes which failure the reduction keeps (from this
    /// first run unless it was chosen up front). `fails` false: it did not fail.
    virtual verdict run_original(const io::generated_case& c) = 0;
    virtual verdict run(const io::generated_case& c) = 0;
    /// The failure kept, in words ("onnxruntime mismatch op Sigmoid f32", "exit code 3").
    [[nodiscard]] virtual std::string failure() const = 0;
    /// The failure and how it was checked, for the bundle's manifest.
    [[nodiscard]] virtual nlohmann::json manifest() const = 0;
};

/// The campaign's judgement as the check: the candidate fails while one of its
/// signatures (case_judge, on the same backends) is the original's.
class signature_check final : public failure_check {
public:
    /// `backends`: one for a backend's signature, two (configurations of one system)
    /// for a "a vs b" one. `signature_id` empty: the original's first signature.
    signature_check(std::vector<std::unique_ptr<backend>> backends, judge_options o, std::filesystem::path scratch,
                    std::string signature_id = {})
        : judge_(o), target_id_(std::move(signature_id)) {
        if (backends.empty()) throw error("tensoracle::campaign::signature_check", "no backend");
        lane_.backends = std::move(backends);
        lane_.scratch = std::move(scratch);
    }

    verdict run_original(const io::generated_case& c) override {
        auto e = judge_.evaluate(lane_, c);
        const auto sigs = e.signatures();
        auto v = observe(e);
        const bool chosen = !target_id_.empty();
        if (!chosen && !sigs.empty()) target_id_ = sigs.front().id();
        for (const auto& s : sigs) {
            if (s.id() == target_id_) target_ = s;
        }
        v.fails = target_.has_value();
        if (chosen && !v.fails && !sigs.empty()) {
            std::string found;
            for (const auto& s : sigs) found += (found.empty() ? "" : ", ") + s.id() + " (" + s.backend + " " + std::string(to_string(s.outcome)) + " " + s.where + ")";
            v.observed += "; signature " + target_id_ + " is not among its signatures: " + found +
                          " (another --level, --no-localize or backend than the campaign's?)";
        }
        if (v.fails) last_failing_ = std::move(e);
        return v;
    }

    verdict run(const io::generated_case& c) override {
        if (!target_) throw error("tensoracle::campaign::signature_check", "run before run_original found the failure");
        auto e = judge_.evaluate(lane_, c);
        auto v = observe(e);
        bool exact = false;
        std::optional<signature> relaxed;
        for (const auto& s : e.signatures()) {
            exact |= s.id() == target_->id();
            if (!relaxed && same_unlocalized_failure(s)) relaxed = s;
        }
        v.fails = exact || relaxed.has_value();
        if (v.fails) {
            if (!exact) v.observed += " (as " + relaxed->where + ")";
            relaxed_ = exact ? std::nullopt : relaxed;
            last_failing_ = std::move(e);
        }
        return v;
    }

    /// An original whose failure could not be localized has the op set for a place
    /// ("ops Add,Relu"), which any removal changes. Such a failure is kept while the same
    /// backend fails with the same class and oracle on a subset of the ops of the place
    /// kept so far, or at one of them once the smaller graph localizes it ("op Relu f32"),
    /// after which that place is kept exactly: the failure cannot drift to another op.
    [[nodiscard]] bool same_unlocalized_failure(const signature& s) const {
        if (!target_ || target_->where.rfind("ops ", 0) != 0) return false;
        const signature& base = relaxed_ ? *relaxed_ : *target_;
        if (base.where.rfind("ops ", 0) != 0) return s.id() == base.id();
        if (s.backend != base.backend || s.outcome != base.outcome || s.oracle != base.oracle) return false;
        auto op_set = [](const std::string& where) {
            std::set<std::string> out;
            std::string list;
            if (where.rfind("ops ", 0) == 0) {
                list = where.substr(4);
            } else if (where.rfind("op ", 0) == 0) {
                list = where.substr(3, where.find(' ', 3) - 3);
            } else {
                return out;
            }
            std::stringstream ss(list);
            for (std::string op; std::getline(ss, op, ',');) out.insert(op);
            return out;
        };
        const auto mine = op_set(base.where), theirs = op_set(s.where);
        return !theirs.empty() && std::includes(mine.begin(), mine.end(), theirs.begin(), theirs.end());
    }
    /// The signature the reduced case has when the original's was unlocalized and changed.
    [[nodiscard]] const std::optional<signature>& reduced_signature() const noexcept { return relaxed_; }

    [[nodiscard]] std::string failure() const override {
        return target_ ? target_->backend + " " + std::string(to_string(target_->outcome)) + " " + target_->where : "(none yet)";
    }

    [[nodiscard]] nlohmann::json manifest() const override {
        nlohmann::json j;
        j["check"] = "signature";
        j["level"] = judge_.options().level;
        j["timeout_seconds"] = judge_.options().timeout_seconds;
        if (target_) j["signature"] = target_->json();
        if (relaxed_) j["reduced_signature"] = relaxed_->json();  // the unlocalized original's, as the reduced case has it
        nlohmann::json b = nlohmann::json::array();
        for (std::size_t k = 0; k < lane_.backends.size(); ++k) {
            nlohmann::json jb{{"name", lane_.backends[k]->name()}};
            if (last_failing_ && k < last_failing_->results.size()) {
                const auto& r = last_failing_->results[k];
                jb["outcome"] = to_string(r.outcome);
                jb["detail"] = r.detail;
                if (r.run.status == run_status::ran) {
                    jb["max_abs_error"] = r.judged.max_abs_error;
                    jb["max_rel_error"] = r.judged.max_rel_error;
                    if (r.judged.min_passing_level) jb["min_passing_level"] = *r.judged.min_passing_level;
                }
                jb["stderr"] = r.run.process.err;
            }
            b.push_back(std::move(jb));
        }
        j["backends"] = b;
        return j;
    }

    [[nodiscard]] const std::optional<signature>& target() const noexcept { return target_; }
    [[nodiscard]] const std::vector<std::unique_ptr<backend>>& backends() const noexcept { return lane_.backends; }
    [[nodiscard]] const judge_options& options() const noexcept { return judge_.options(); }

private:
    /// What the backends did, before deciding whether it is the failure.
    [[nodiscard]] verdict observe(const case_judge::evaluation& e) const {
        verdict v;
        for (std::size_t k = 0; k < e.results.size(); ++k) {
            v.observed += (v.observed.empty() ? "" : "; ") + lane_.backends[k]->name() + " " + std::string(to_string(e.results[k].outcome));
            v.hang |= e.results[k].outcome == outcome_class::hang;
        }
        for (const auto& p : e.pair_signatures) v.observed += "; " + p.backend + " " + std::string(to_string(p.outcome));
        return v;
    }

    case_judge judge_;
    detail::lane lane_;
    std::string target_id_;
    std::optional<signature> target_, relaxed_;
    std::optional<case_judge::evaluation> last_failing_;
};

/// Polygraphy-style: any command is the check. It gets the candidate in the ONNX
/// test layout ({model} = DIR/model.onnx, {inputs} = DIR/test_data_set_0 with
/// input_<k>.pb and our output_<k>.pb, {dir} = DIR); exit 0 passes, a non-zero exit
/// (or a signal N, read as 128+N) fails, narrowed by `fail_code` and `fail_regex`
/// (searched in stdout and stderr). Past the time-out is neither: reported as a hang.
class command_check final : public failure_check {
public:
    command_check(std::vector<std::string> command, std::filesystem::path scratch, double timeout_seconds = 10.0,
                  std::optional<int> fail_code = std::nullopt, std::string fail_regex = {})
        : command_(std::move(command)), scratch_(std::move(scratch)), timeout_(timeout_seconds), fail_code_(fail_code),
          regex_text_(std::move(fail_regex)) {
        const char* where = "tensoracle::campaign::command_check";
        if (command_.empty()) throw error(where, "empty command");
        if (!(timeout_ > 0)) throw error(where, "the time-out must be positive");
        if (!regex_text_.empty()) {
            try {
                regex_ = std::regex(regex_text_);
            } catch (const std::regex_error& e) {
                throw error(where, "--fail-regex '" + regex_text_ + "' is not a regular expression: " + e.what());
            }
        }
    }

    verdict run_original(const io::generated_case& c) override {
        auto v = run(c);
        original_ = v.observed;
        return v;
    }

    verdict run(const io::generated_case& c) override {
        detail::reset_dir(scratch_);
        detail::write_test_layout(c, scratch_);
        std::vector<std::string> argv;
        for (const auto& w : command_) {
            argv.push_back(detail::substitute(w, {{"{model}", (scratch_ / "model.onnx").string()},
                                                  {"{inputs}", (scratch_ / "test_data_set_0").string()},
                                                  {"{dir}", scratch_.string()}}));
        }
        const auto p = run_process(argv, process_options::with_timeout(timeout_));
        verdict v;
        switch (p.kind) {
            case exit_kind::not_started:
                throw backend_unavailable("the check command", p.error_message);
            case exit_kind::timed_out:
                v.hang = true;
                v.observed = "timed out after " + std::to_string(timeout_) + " s";
                return v;
            case exit_kind::exited:
                v.observed = "exit code " + std::to_string(p.exit_code);
                break;
            case exit_kind::signalled:
                v.observed = "signal " + std::to_string(p.signal);
                break;
        }
        const int code = p.kind == exit_kind::exited ? p.exit_code : 128 + p.signal;
        v.fails = code != 0 && (!fail_code_ || code == *fail_code_) && (regex_text_.empty() || matches(p.out) || matches(p.err));
        if (v.fails) last_stderr_ = p.err;
        return v;
    }

    [[nodiscard]] std::string failure() const override {
        std::string s = original_.empty() ? "a failing exit" : original_;
        if (fail_code_) s += " (required: exit code " + std::to_string(*fail_code_) + ")";
        if (!regex_text_.empty()) s += " (required: output matching '" + regex_text_ + "')";
        return s;
    }

    [[nodiscard]] nlohmann::json manifest() const override {
        nlohmann::json j{{"check", "command"}, {"command", command_}, {"timeout_seconds", timeout_}, {"original", original_}, {"stderr", last_stderr_}};
        if (fail_code_) j["fail_code"] = *fail_code_;
        if (!regex_text_.empty()) j["fail_regex"] = regex_text_;
        return j;
    }

    [[nodiscard]] const std::vector<std::string>& command() const noexcept { return command_; }

private:
    /// Line by line: libstdc++'s matcher recurses per character, so one search over a
    /// long log could exhaust the stack.
    [[nodiscard]] bool matches(const std::string& text) const {
        std::istringstream is(text);
        for (std::string line; std::getline(is, line);) {
            if (std::regex_search(line, regex_)) return true;
        }
        return false;
    }

    std::vector<std::string> command_;
    std::filesystem::path scratch_;
    double timeout_;
    std::optional<int> fail_code_;
    std::string regex_text_;
    std::regex regex_;
    std::string original_, last_stderr_;
};

/// The original does not fail (or fails otherwise): nothing to reduce.
class original_does_not_fail : public error {
public:
    using error::error;
};

struct reduce_options {
    std::size_t max_calls = 2000;         ///< check runs (each repeat counts)
    double time_limit_seconds = 600.0;    ///< stop trying candidates after this
    /// Runs of the original to measure how reliably it fails: three, and ten when one passes.
    /// A flaky failure is then checked `repeats` times per candidate (it fails if any run does),
    /// enough to miss it with at most 5% probability (at most 20).
    unsigned measure_runs = 3;
    unsigned repeats = 0;  ///< 0: from the measured rate
    bool shapes = true, attributes = true, values = true;
};

struct reduce_progress {
    std::string phase;
    std::size_t calls = 0, nodes = 0, accepted = 0;
    double seconds = 0.0;
};

struct reduce_result {
    io::generated_case original, reduced;
    std::string failure;                 ///< the kept failure, in words
    double failure_rate = 1.0;           ///< of the original, over `measured` runs
    unsigned measured = 0, repeats = 1;
    std::size_t calls = 0, candidates = 0, invalid = 0, hangs = 0;
    bool out_of_budget = false;
    double seconds = 0.0;
    std::vector<std::string> steps;      ///< accepted reductions, in order
};

namespace detail {

/// Elements of a tensor's interface counted for "size".
[[nodiscard]] inline std::size_t element_total(const io::generated_case& c) {
    std::size_t n = 0;
    for (const auto& [name, t] : c.inputs) n += t.size();
    for (const auto& [name, t] : c.model.initializers) n += t.size();
    return n;
}

/// The first `keep` entries of `t` along `axis` (a prefix slice).
[[nodiscard]] inline tensor prefix_slice(const tensor& t, std::size_t axis, std::size_t keep) {
    auto dims = t.shape();
    const std::size_t outer = std::accumulate(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(axis), std::size_t{1}, std::multiplies<>());
    const std::size_t inner = std::accumulate(dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, dims.end(), std::size_t{1}, std::multiplies<>());
    const std::size_t old = dims[axis];
    dims[axis] = keep;
    const auto bytes = t.to_bytes();
    const std::size_t width = t.size() == 0 ? 0 : bytes.size() / t.size();
    std::vector<std::byte> out;
    out.reserve(outer * keep * inner * width);
    for (std::size_t o = 0; o < outer; ++o) {
        const auto* from = bytes.data() + (o * old * inner) * width;
        out.insert(out.end(), from, from + keep * inner * width);
    }
    return tensor::from_bytes(t.element_dtype(), dims, out);
}

/// `t` with its elements in [lo, hi) replaced by `value` (cast to its dtype).
[[nodiscard]] inline tensor with_elements(const tensor& t, std::size_t lo, std::size_t hi, double value) {
    auto v = t.to<double>();
    for (std::size_t i = lo; i < hi && i < v.size(); ++i) v.data()[i] = value;
    return tensor::from_array_as(v, t.element_dtype());
}

[[nodiscard]] inline bool all_equal(const tensor& t, std::size_t lo, std::size_t hi, double value) {
    for (std::size_t i = lo; i < hi; ++i) {
        if (t.value_as_double(i) != value) return false;
    }
    return true;
}

[[nodiscard]] inline tensor rounded(const tensor& t) {
    auto v = t.to<double>();
    for (auto& x : v) x = std::isfinite(x) ? std::nearbyint(x) : x;
    return tensor::from_array_as(v, t.element_dtype());
}

/// A graph's node, input and output counts, in words.
[[nodiscard]] inline std::string size_text(const io::generated_case& c) {
    return std::to_string(c.model.nodes.size()) + " nodes, " + std::to_string(c.model.inputs.size()) + " inputs, " +
           std::to_string(c.model.initializers.size()) + " weights, " + std::to_string(element_total(c)) + " elements";
}

/// The graph and feeds left when the nodes in `removed` go: their consumers read
/// new graph inputs frozen to the values they computed (or, with `bypass`, the
/// removed node's input `bypass[v]`); values the kept nodes computed for a removed
/// consumer become graph outputs, so what they computed stays observed.
[[nodiscard]] inline std::optional<std::pair<graph::graph, value_map>> without_nodes(const io::generated_case& c, const std::set<std::size_t>& removed,
                                                                                     const std::map<std::string, std::string>& bypass = {}) {
    const auto& g = c.model;
    graph::graph out;
    out.name = g.name;
    out.opset = g.opset;
    std::set<std::string> removed_outputs, removed_inputs;
    for (const auto i : removed) {
        for (const auto& o : g.nodes[i].outputs) removed_outputs.insert(o);
        for (const auto& in : g.nodes[i].inputs) removed_inputs.insert(in);
    }
    auto rename = [&](const std::string& v) {
        const auto it = bypass.find(v);
        return it == bypass.end() ? v : it->second;
    };
    std::set<std::string> produced;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        if (removed.count(i)) continue;
        auto n = g.nodes[i];
        for (auto& in : n.inputs) in = in.empty() ? in : rename(in);
        for (const auto& o : n.outputs) produced.insert(o);
        out.nodes.push_back(std::move(n));
    }
    std::set<std::string> needed;
    for (const auto& n : out.nodes) {
        for (const auto& in : n.inputs) {
            if (!in.empty()) needed.insert(in);
        }
    }
    std::vector<std::string> outputs;
    std::set<std::string> seen;
    for (const auto& o : g.outputs) {
        const auto name = rename(o.name);
        if (produced.count(name) && seen.insert(name).second) outputs.push_back(name);
    }
    for (const auto& n : out.nodes) {
        for (const auto& o : n.outputs) {
            if (!o.empty() && removed_inputs.count(o) && !needed.count(o) && seen.insert(o).second) outputs.push_back(o);
        }
    }
    if (outputs.empty()) return std::nullopt;
    for (const auto& o : outputs) {
        const auto& t = c.values.at(o);
        out.outputs.push_back({o, t.element_dtype(), t.shape()});
    }
    value_map feeds;
    for (const auto& in : g.inputs) {
        if (needed.count(in.name)) {
            out.inputs.push_back(in);
            feeds.emplace(in.name, c.inputs.at(in.name));
        }
    }
    for (const auto& [name, t] : g.initializers) {
        if (needed.count(name)) out.initializers.emplace(name, t);
    }
    for (const auto& n : out.nodes) {  // first-use order: deterministic
        for (const auto& in : n.inputs) {
            if (in.empty() || !removed_outputs.count(in) || feeds.count(in)) continue;
            const auto& t = c.values.at(in);
            out.inputs.push_back({in, t.element_dtype(), t.shape()});
            feeds.emplace(in, t);
        }
    }
    return std::make_pair(std::move(out), std::move(feeds));
}

/// `c` without graph output `k`, and without the nodes, inputs and weights only it needed.
[[nodiscard]] inline std::optional<std::pair<graph::graph, value_map>> without_output(const io::generated_case& c, std::size_t k) {
    if (c.model.outputs.size() < 2) return std::nullopt;
    graph::graph g = c.model;
    g.outputs.erase(g.outputs.begin() + static_cast<std::ptrdiff_t>(k));
    std::set<std::string> live;
    for (const auto& o : g.outputs) live.insert(o.name);
    std::vector<bool> keep(g.nodes.size(), false);
    for (std::size_t i = g.nodes.size(); i-- > 0;) {  // reverse topological (generated graphs are in order; checked below)
        const auto& n = g.nodes[i];
        if (std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& o) { return !o.empty() && live.count(o) > 0; })) {
            keep[i] = true;
            for (const auto& in : n.inputs) {
                if (!in.empty()) live.insert(in);
            }
        }
    }
    graph::graph out = g;
    out.nodes.clear();
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        if (keep[i]) out.nodes.push_back(g.nodes[i]);
    }
    out.inputs.clear();
    value_map feeds;
    for (const auto& in : g.inputs) {
        if (live.count(in.name)) {
            out.inputs.push_back(in);
            feeds.emplace(in.name, c.inputs.at(in.name));
        }
    }
    std::erase_if(out.initializers, [&](const auto& kv) { return live.count(kv.first) == 0; });
    return std::make_pair(std::move(out), std::move(feeds));
}

/// The graph with its nodes in topological order (the passes rely on it). A graph
/// already in one keeps it: localized signatures name the first disagreeing node in
/// node order, so reordering could move the signature.
[[nodiscard]] inline graph::graph in_topological_order(graph::graph g) {
    const auto order = g.topological_order();
    std::set<std::string> defined;
    for (const auto& in : g.inputs) defined.insert(in.name);
    for (const auto& [name, t] : g.initializers) defined.insert(name);
    bool in_order = true;
    for (const auto& n : g.nodes) {
        for (const auto& in : n.inputs) in_order &= in.empty() || defined.count(in) > 0;
        for (const auto& o : n.outputs) defined.insert(o);
    }
    if (in_order) return g;
    std::vector<graph::node> nodes;
    for (const auto i : order) nodes.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(nodes);
    return g;
}

}  // namespace detail

/// Reduces `original` while `check` says it fails the same way; see the file comment.
/// Throws original_does_not_fail when the original does not fail, and
/// tensoracle::error when the original itself is not a valid case.
class reducer {
public:
    reducer(failure_check& check, reduce_options o, std::function<void(const reduce_progress&)> on_progress = {})
        : check_(check), o_(o), on_progress_(std::move(on_progress)) {}

    reduce_result run(const io::generated_case& given) {
        start_ = std::chrono::steady_clock::now();
        r_ = {};
        auto original = evaluate_case(detail::in_topological_order(given.model), given.inputs, given.seed, given.index);
        original.config_hash = given.config_hash;
        r_.original = original;
        measure(original);
        cur_ = original;
        for (bool changed = true; changed && !out_of_budget();) {
            changed = false;
            changed |= remove_nodes_ddmin();
            changed |= remove_nodes_one_by_one();
            changed |= drop_outputs();
        }
        for (bool changed = true; changed && !out_of_budget();) {
            changed = false;
            if (o_.attributes) changed |= reset_attributes();
            if (o_.shapes) changed |= shrink_shapes();
            if (o_.values) changed |= simplify_values();
            if (changed) changed |= remove_nodes_one_by_one();  // smaller values may free a node
        }
        r_.reduced = cur_;
        r_.reduced.config_hash = original.config_hash;
        r_.out_of_budget = out_of_budget();
        r_.seconds = elapsed();
        report("done");
        return r_;
    }

private:
    [[nodiscard]] double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
    [[nodiscard]] bool out_of_budget() const {
        return r_.calls >= o_.max_calls || (o_.time_limit_seconds > 0 && elapsed() > o_.time_limit_seconds);
    }
    void report(const std::string& phase) {
        if (!on_progress_) return;
        on_progress_({phase, r_.calls, cur_.model.nodes.size(), r_.steps.size(), elapsed()});
    }

    void measure(const io::generated_case& original) {
        report("measuring the original");
        auto first = check_.run_original(original);
        ++r_.calls;
        r_.failure = check_.failure();
        if (!first.fails) {
            throw original_does_not_fail("tensoracle::campaign::reduce",
                                         "original does not fail (" + (first.observed.empty() ? std::string("it passed") : first.observed) +
                                             "): nothing to reduce");
        }
        unsigned runs = 1, fails = 1;
        const unsigned planned = std::max(1u, o_.measure_runs);
        for (; runs < planned; ++runs) fails += check_.run(original).fails ? 1 : 0;
        if (fails < runs) {  // flaky: measure over more runs
            for (; runs < std::max(planned, 10u); ++runs) fails += check_.run(original).fails ? 1 : 0;
        }
        r_.calls += runs - 1;
        r_.measured = runs;
        r_.failure_rate = static_cast<double>(fails) / runs;
        if (o_.repeats > 0) {
            r_.repeats = o_.repeats;
        } else if (fails == runs) {
            r_.repeats = 1;
        } else {
            r_.repeats = static_cast<unsigned>(std::min(20.0, std::ceil(std::log(0.05) / std::log(1.0 - r_.failure_rate))));
        }
    }

    /// Validates the candidate, runs the check (with repeats); keeps it when it fails.
    bool try_candidate(std::optional<std::pair<graph::graph, value_map>> cand, const std::string& step) {
        if (!cand || out_of_budget()) return false;
        ++r_.candidates;
        io::generated_case c;
        try {
            c = evaluate_case(std::move(cand->first), std::move(cand->second), cur_.seed, cur_.index);
        } catch (const std::exception&) {
            ++r_.invalid;  // breaks a rule or an op's constraint: never shown to the check
            return false;
        }
        for (unsigned k = 0; k < r_.repeats && !out_of_budget(); ++k) {
            const auto v = check_.run(c);
            ++r_.calls;
            if (v.hang) ++r_.hangs;
            if (v.fails) {
                cur_ = std::move(c);
                r_.steps.push_back(step);
                report(step);
                return true;
            }
        }
        return false;
    }

    bool remove_set(const std::set<std::size_t>& s, const std::string& step) {
        return try_candidate(detail::without_nodes(cur_, s), step);
    }

    static std::string names(const io::generated_case& c, const std::set<std::size_t>& s) {
        std::string out;
        for (const auto i : s) out += (out.empty() ? "" : ",") + c.model.nodes[i].op_type;
        return out;
    }

    bool remove_nodes_ddmin() {
        report("removing nodes (ddmin)");
        bool any = false;
        std::size_t n = 2;
        while (cur_.model.nodes.size() >= 2 && !out_of_budget()) {
            const std::size_t size = cur_.model.nodes.size();
            n = std::min(n, size);
            std::vector<std::set<std::size_t>> chunks(n);
            for (std::size_t i = 0; i < size; ++i) chunks[i * n / size].insert(i);
            bool reduced = false;
            for (const auto& chunk : chunks) {  // remove a chunk
                if (remove_set(chunk, "removed " + names(cur_, chunk))) {
                    n = std::max<std::size_t>(n - 1, 2);
                    reduced = true;
                    break;
                }
            }
            if (!reduced && n > 2) {
                for (const auto& chunk : chunks) {  // keep only a chunk
                    std::set<std::size_t> rest;
                    for (std::size_t i = 0; i < size; ++i) {
                        if (!chunk.count(i)) rest.insert(i);
                    }
                    if (remove_set(rest, "kept only " + names(cur_, chunk))) {
                        n = 2;
                        reduced = true;
                        break;
                    }
                }
            }
            if (reduced) {
                any = true;
                continue;
            }
            if (n >= size) break;
            n = std::min(2 * n, size);
        }
        return any;
    }

    bool remove_nodes_one_by_one() {
        report("removing nodes one by one");
        bool any = false;
        for (std::size_t i = cur_.model.nodes.size(); i-- > 0 && !out_of_budget();) {
            if (i >= cur_.model.nodes.size()) continue;
            const auto n = cur_.model.nodes[i];
            if (remove_set({i}, "removed " + n.op_type)) {
                any = true;
                continue;
            }
            // Else its consumers read one of its own inputs of the same type and shape.
            const auto out = std::find_if(n.outputs.begin(), n.outputs.end(), [](const std::string& o) { return !o.empty(); });
            const bool one_output = std::count_if(n.outputs.begin(), n.outputs.end(), [](const std::string& o) { return !o.empty(); }) == 1;
            for (const auto& in : n.inputs) {
                if (in.empty() || !one_output) continue;
                const auto& a = cur_.values.at(in);
                const auto& b = cur_.values.at(*out);
                if (a.element_dtype() != b.element_dtype() || a.shape() != b.shape()) continue;
                if (try_candidate(detail::without_nodes(cur_, {i}, {{*out, in}}), "bypassed " + n.op_type)) {
                    any = true;
                    break;
                }
            }
        }
        return any;
    }

    bool drop_outputs() {
        report("dropping outputs");
        bool any = false;
        for (std::size_t k = cur_.model.outputs.size(); k-- > 0 && !out_of_budget();) {
            if (k >= cur_.model.outputs.size()) continue;
            const auto name = cur_.model.outputs[k].name;
            any |= try_candidate(detail::without_output(cur_, k), "dropped output " + name);
        }
        return any;
    }

    bool reset_attributes() {
        report("attributes to defaults");
        bool any = false;
        for (std::size_t i = 0; i < cur_.model.nodes.size() && !out_of_budget(); ++i) {
            std::vector<std::string> keys;
            for (const auto& [k, v] : cur_.model.nodes[i].attributes) {
                if (k.rfind("__", 0) != 0) keys.push_back(k);
            }
            for (const auto& k : keys) {
                graph::graph g = cur_.model;
                g.nodes[i].attributes.erase(k);
                any |= try_candidate(std::make_pair(std::move(g), cur_.inputs), "default " + cur_.model.nodes[i].op_type + "." + k);
            }
        }
        return any;
    }

    /// The names of the current case's inputs and weights, inputs first.
    [[nodiscard]] std::vector<std::string> tensor_names() const {
        std::vector<std::string> names;
        for (const auto& in : cur_.model.inputs) names.push_back(in.name);
        for (const auto& [name, t] : cur_.model.initializers) names.push_back(name);
        return names;
    }
    /// The current case's input or weight `name` (null once a reduction removed it).
    [[nodiscard]] const tensor* find_tensor(const std::string& name) const {
        if (const auto it = cur_.inputs.find(name); it != cur_.inputs.end()) return &it->second;
        if (const auto it = cur_.model.initializers.find(name); it != cur_.model.initializers.end()) return &it->second;
        return nullptr;
    }

    /// The current case with `f` applied to every input and weight tensor (by name).
    template <class F>
    [[nodiscard]] std::pair<graph::graph, value_map> with_tensors(F&& f) const {
        graph::graph g = cur_.model;
        value_map feeds = cur_.inputs;
        for (auto& [name, t] : feeds) t = f(name, t);
        for (auto& [name, t] : g.initializers) t = f(name, t);
        return {std::move(g), std::move(feeds)};
    }

    bool shrink_shapes() {
        report("shrinking shapes");
        bool any = false;
        // All dims of one size at once (shapes that must agree shrink together), largest first.
        for (bool changed = true; changed && !out_of_budget();) {
            changed = false;
            std::set<std::size_t, std::greater<>> sizes;
            for (const auto* m : {&cur_.inputs, &cur_.model.initializers}) {
                for (const auto& [name, t] : *m) {
                    for (const auto d : t.shape()) {
                        if (d > 1) sizes.insert(d);
                    }
                }
            }
            for (const auto d : sizes) {
                auto cand = with_tensors([&](const std::string&, const tensor& t) {
                    tensor s = t;
                    for (std::size_t a = 0; a < s.rank(); ++a) {
                        if (s.shape()[a] == d) s = detail::prefix_slice(s, a, (d + 1) / 2);
                    }
                    return s;
                });
                if (try_candidate(std::move(cand), "dims " + std::to_string(d) + " -> " + std::to_string((d + 1) / 2))) {
                    changed = any = true;
                    break;
                }
            }
        }
        // Then one axis of one tensor at a time.
        for (const auto& name : tensor_names()) {
            for (std::size_t a = 0;; ++a) {
                const tensor* t = find_tensor(name);
                if (t == nullptr || a >= t->rank() || out_of_budget()) break;
                const auto d = t->shape()[a];
                if (d < 2) continue;
                auto cand = with_tensors([&](const std::string& n, const tensor& x) { return n == name ? detail::prefix_slice(x, a, (d + 1) / 2) : x; });
                if (try_candidate(std::move(cand), name + " axis " + std::to_string(a) + " " + std::to_string(d) + " -> " + std::to_string((d + 1) / 2))) {
                    any = true;
                    --a;  // the same axis again
                }
            }
        }
        return any;
    }

    bool simplify_values() {
        report("simplifying values");
        bool any = false;
        for (const auto& name : tensor_names()) {
            auto replace = [&](tensor v, const std::string& step) {
                const tensor* t = find_tensor(name);
                if (t == nullptr || v.identical(*t)) return false;
                return try_candidate(with_tensors([&](const std::string& n, const tensor& x) { return n == name ? v : x; }), step);
            };
            // Only ever simpler (all zeros < all ones < integers < the rest; more zeros is
            // simpler), so the passes end.
            const tensor* t = find_tensor(name);
            if (t == nullptr || t->size() == 0) continue;
            const auto size = t->size();
            if (detail::all_equal(*t, 0, size, 0.0)) continue;
            if (replace(detail::with_elements(*t, 0, size, 0.0), name + " = 0")) {
                any = true;
                continue;
            }
            if (detail::all_equal(*t, 0, size, 1.0)) continue;
            if (replace(detail::with_elements(*t, 0, size, 1.0), name + " = 1")) {
                any = true;
                continue;
            }
            if (info(t->element_dtype()).is_floating) any |= replace(detail::rounded(*t), name + " rounded");
            // Chunks zeroed, halves to sixteenths: the few elements that matter stay.
            for (std::size_t parts = 2; parts <= 16 && parts <= size && !out_of_budget(); parts *= 2) {
                for (std::size_t p = 0; p < parts; ++p) {
                    t = find_tensor(name);
                    if (t == nullptr) break;
                    const std::size_t lo = p * size / parts, hi = (p + 1) * size / parts;
                    if (detail::all_equal(*t, lo, hi, 0.0)) continue;
                    any |= replace(detail::with_elements(*t, lo, hi, 0.0),
                                   name + "[" + std::to_string(lo) + ":" + std::to_string(hi) + "] = 0");
                }
            }
        }
        return any;
    }

    failure_check& check_;
    reduce_options o_;
    std::function<void(const reduce_progress&)> on_progress_;
    std::chrono::steady_clock::time_point start_;
    reduce_result r_;
    io::generated_case cur_;
};

/// Reduces `original` under `check`; see reducer.
[[nodiscard]] inline reduce_result reduce(const io::generated_case& original, failure_check& check, const reduce_options& o = {},
                                          std::function<void(const reduce_progress&)> on_progress = {}) {
    reducer r(check, o, std::move(on_progress));
    return r.run(original);
}

/// How the bundle's repro.cpp reaches the backend (empty command: it has no repro.cpp
/// test of a backend, only of the check command or nothing).
struct bundle_info {
    /// By backend name: with {model} {inputs} {outputs} run once per case; without, a worker.
    std::map<std::string, std::vector<std::string>> backend_commands;
    std::map<std::string, std::string> backend_descriptions;  ///< version and command, for the manifest
    std::string rerun;                                         ///< the command line that made this bundle
};

namespace detail {

[[nodiscard]] inline std::string cpp_string(const std::string& s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\%03o", c);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

[[nodiscard]] inline std::string cpp_strings(const std::vector<std::string>& v) {
    std::string out = "{";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + cpp_string(v[i]);
    return out + "}";
}

[[nodiscard]] inline nlohmann::json size_json(const io::generated_case& c) {
    return {{"nodes", c.model.nodes.size()}, {"inputs", c.model.inputs.size()}, {"weights", c.model.initializers.size()},
            {"elements", element_total(c)}, {"outputs", c.model.outputs.size()}, {"ops", c.op_types}};
}

/// The standalone doctest test of a bundle: the case through the backend(s), or the check command.
[[nodiscard]] inline std::string repro_source(const reduce_result& r, const failure_check& check, const bundle_info& info) {
    std::ostringstream os;
    os << "// A reproducer written by tensoracle " << version_string << " (tensoracle reduce): " << r.failure << ".\n"
       << "// Build with the CMakeLists.txt beside it against an installed tensoracle; the test fails while the bug is there.\n"
       << "#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>\n\n#include <filesystem>\n#include <string>\n#include <vector>\n\n"
       << "#include <tensoracle/campaign/backend.hpp>\n#include <tensoracle/doctest.hpp>\n#include <tensoracle/io/onnx.hpp>\n\n"
       << "#ifndef TENSORACLE_REPRO_DIR\n#define TENSORACLE_REPRO_DIR \".\"\n#endif\n\n"
       << "namespace fs = std::filesystem;\nnamespace tc = tensoracle::campaign;\n\n";
    const std::size_t outputs = r.reduced.model.outputs.size();
    if (const auto* sc = dynamic_cast<const signature_check*>(&check)) {
        const auto& sig = *sc->target();
        const double level = sc->options().level;
        os << "// The backend as the campaign ran it; the reference's outputs are test_data_set_0/output_<k>.pb.\n"
           << "static tc::backend_run run_backend(const std::string& name, const std::vector<std::string>& command, const std::string& out) {\n"
           << "    const fs::path dir = TENSORACLE_REPRO_DIR;\n"
           << "    const fs::path outputs = fs::temp_directory_path() / (\"tensoracle_repro_" << sig.id() << "_\" + out);\n"
           << "    fs::remove_all(outputs);\n    fs::create_directories(outputs);\n"
           << "    bool one_shot = false;\n    for (const auto& w : command) one_shot |= w.find(\"{model}\") != std::string::npos;\n"
           << "    tc::case_paths paths{dir / \"model.onnx\", dir / \"test_data_set_0\", outputs, " << outputs << "};\n"
           << "    if (one_shot) return tc::command_backend(name, command).run(paths, " << sc->options().timeout_seconds << ");\n"
           << "    return tc::worker_backend(name, command).run(paths, " << sc->options().timeout_seconds << ");\n}\n\n"
           << "TEST_CASE(" << cpp_string(sig.backend + ": " + std::string(to_string(sig.outcome)) + " at " + sig.where) << ") {\n"
           << "    const fs::path dir = TENSORACLE_REPRO_DIR;\n";
        // A backend's signature: its outputs against ours. "a vs b": a's against b's.
        std::vector<std::string> names{sig.backend};
        if (const auto p = sig.backend.find(" vs "); p != std::string::npos) names = {sig.backend.substr(0, p), sig.backend.substr(p + 4)};
        for (const auto& n : names) {
            if (info.backend_commands.count(n) == 0) {
                os << "    // " << n << " was given in-process (a C++ callable): run the reduced case through it here.\n"
                   << "    FAIL(\"write the call of your backend here; the bundle's manifest.json says what went wrong\");\n}\n";
                return os.str();
            }
        }
        for (std::size_t b = 0; b < names.size(); ++b) {
            os << "    const auto r" << b << " = run_backend(" << cpp_string(names[b]) << ", " << cpp_strings(info.backend_commands.at(names[b]))
               << ", \"out" << b << "\");\n"
               << "    INFO(" << cpp_string(names[b] + ": ") << ", tc::to_string(r" << b << ".status), \" \", r" << b << ".message);\n"
               << "    REQUIRE(r" << b << ".status == tc::run_status::ran);\n"
               << "    REQUIRE(r" << b << ".outputs.size() == " << outputs << "u);\n";
        }
        os << "    for (std::size_t k = 0; k < " << outputs << "u; ++k) {\n        CAPTURE(k);\n";
        if (names.size() == 1) {
            os << "        const auto expected = tensoracle::io::load_tensor(dir / \"test_data_set_0\" / (\"output_\" + std::to_string(k) + \".pb\"));\n"
               << "        TENSORACLE_CHECK_ALLCLOSE(r0.outputs[k], expected, tensoracle::level{" << level << "});\n    }\n}\n";
        } else {
            os << "        TENSORACLE_CHECK_ALLCLOSE(r0.outputs[k], r1.outputs[k], tensoracle::level{" << level << "});\n    }\n}\n";
        }
        return os.str();
    }
    if (const auto* cc = dynamic_cast<const command_check*>(&check)) {
        os << "#include <tensoracle/campaign/process.hpp>\n\n"
           << "TEST_CASE(" << cpp_string("check command passes: " + r.failure) << ") {\n"
           << "    const fs::path dir = TENSORACLE_REPRO_DIR;\n"
           << "    std::vector<std::string> argv = " << cpp_strings(cc->command()) << ";\n"
           << "    for (auto& w : argv) {\n"
           << "        for (const auto& [key, value] : {std::pair<std::string, std::string>{\"{model}\", (dir / \"model.onnx\").string()},\n"
           << "                                         {\"{inputs}\", (dir / \"test_data_set_0\").string()}, {\"{dir}\", dir.string()}}) {\n"
           << "            for (auto p = w.find(key); p != std::string::npos; p = w.find(key, p + value.size())) w.replace(p, key.size(), value);\n"
           << "        }\n    }\n"
           << "    const auto p = tc::run_process(argv, tc::process_options::with_timeout(60));\n"
           << "    INFO(\"stderr: \", p.err);\n"
           << "    CHECK(p.kind == tc::exit_kind::exited);\n    CHECK(p.exit_code == 0);\n}\n";
    }
    return os.str();
}

[[nodiscard]] inline std::string repro_cmake() {
    return "# Builds repro.cpp against an installed tensoracle (cmake -DCMAKE_PREFIX_PATH=<its prefix>).\n"
           "cmake_minimum_required(VERSION 3.21)\n"
           "project(tensoracle_repro LANGUAGES CXX)\n"
           "find_package(tensoracle CONFIG REQUIRED)\n"
           "find_package(doctest CONFIG REQUIRED)\n"
           "find_package(nlohmann_json 3 CONFIG REQUIRED)\n"
           "if(NOT TARGET tensoracle::onnx)\n"
           "  message(FATAL_ERROR \"the reproducer needs tensoracle's ONNX I/O (tensoracle::onnx: libonnx and protobuf)\")\n"
           "endif()\n"
           "add_executable(repro repro.cpp)\n"
           "target_link_libraries(repro PRIVATE tensoracle::onnx doctest::doctest nlohmann_json::nlohmann_json)\n"
           "target_compile_definitions(repro PRIVATE TENSORACLE_REPRO_DIR=\"${CMAKE_CURRENT_SOURCE_DIR}\")\n"
           "enable_testing()\n"
           "add_test(NAME repro COMMAND repro)\n";
}

}  // namespace detail

/// Writes the reproducer bundle of `r` into `dir`: model.onnx and test_data_set_0/
/// (inputs, our expected outputs), model.txt, manifest.json, repro.cpp with its
/// CMakeLists.txt, README.md. Returns the manifest.
inline nlohmann::json write_bundle(const reduce_result& r, const failure_check& check, const std::filesystem::path& dir,
                                   const bundle_info& info = {}) {
    const char* where = "tensoracle::campaign::write_bundle";
    std::error_code ec;
    if (std::filesystem::exists(dir) && !std::filesystem::is_empty(dir, ec) && !std::filesystem::exists(dir / "manifest.json")) {
        throw error(where, dir.string() + " exists and holds something else than a bundle: give an empty or new folder");
    }
    std::filesystem::remove_all(dir / "test_data_set_0", ec);
    const auto& c = r.reduced;
    detail::write_test_layout(c, dir);
    auto write_text = [&](const char* name, const std::string& text) {
        std::ofstream f(dir / name, std::ios::binary);
        if (!f || !(f << text)) throw error(where, "cannot write " + (dir / name).string());
    };
    const auto graph_text = io::model_text(c.model);
    write_text("model.txt", graph_text);
    write_text("original.txt", io::model_text(r.original.model));

    nlohmann::json m;
    m["schema"] = "tensoracle.reduce.bundle/1";
    m["kit_version"] = version_string;
    m["case"] = {{"id", io::case_id(r.original.seed, r.original.index)},
                 {"seed", r.original.seed},
                 {"index", r.original.index},
                 {"config_hash", r.original.config_hash}};
    m["failure"] = r.failure;
    m["check"] = check.manifest();
    if (!info.backend_commands.empty()) m["backend_commands"] = info.backend_commands;
    if (!info.backend_descriptions.empty()) m["backend_descriptions"] = info.backend_descriptions;
    m["failure_rate"] = r.failure_rate;
    m["measured_runs"] = r.measured;
    m["repeats"] = r.repeats;
    m["original"] = detail::size_json(r.original);
    m["reduced"] = detail::size_json(c);
    m["check_runs"] = r.calls;
    m["candidates"] = r.candidates;
    m["invalid_candidates"] = r.invalid;
    m["hangs"] = r.hangs;
    m["seconds"] = r.seconds;
    m["out_of_budget"] = r.out_of_budget;
    m["steps"] = r.steps;
    if (!info.rerun.empty()) m["rerun"] = info.rerun;
    write_text("repro.cpp", detail::repro_source(r, check, info));
    write_text("CMakeLists.txt", detail::repro_cmake());

    std::ostringstream rd;
    std::string chain;
    for (const auto& n : c.model.nodes) chain += (chain.empty() ? "" : " -> ") + n.op_type;
    rd << "# " << r.failure << "\n\n";
    rd << "Found and reduced by tensoracle " << version_string << " (case " << io::case_id(r.original.seed, r.original.index) << ").\n\n";
    rd << "**What goes wrong.** " << r.failure << ", on the op chain " << (chain.empty() ? "(no nodes)" : chain) << ".";
    if (const auto* sc = dynamic_cast<const signature_check*>(&check)) {
        const auto cj = sc->manifest();
        for (const auto& b : cj["backends"]) {
            if (!b.contains("outcome")) continue;
            rd << "\n" << b["name"].get<std::string>() << ": " << b["outcome"].get<std::string>();
            if (b.contains("detail") && !b["detail"].get<std::string>().empty()) rd << " (" << b["detail"].get<std::string>() << ")";
            if (b.contains("max_abs_error")) {
                // null: infinite (JSON has no infinity; a relative error against a reference 0)
                const auto put = [&rd](const nlohmann::json& e) {
                    if (e.is_number()) {
                        rd << e.get<double>();
                    } else {
                        rd << "inf";
                    }
                };
                rd << "; max abs error ";
                put(b["max_abs_error"]);
                rd << ", max rel error ";
                put(b.value("max_rel_error", nlohmann::json()));
            }
            if (b.contains("min_passing_level")) rd << "; it passes only from tolerance level " << b["min_passing_level"].get<int>();
            if (b.contains("max_abs_error")) rd << " (compared at level " << sc->options().level << ")";
            rd << ".";
        }
    }
    rd << "\n\n**Size.** " << detail::size_text(r.original) << " reduced to " << detail::size_text(c) << " in " << r.calls
       << " check runs (" << r.seconds << " s)";
    if (r.failure_rate < 1.0) rd << "; the original failed in " << r.failure_rate * 100 << "% of " << r.measured << " runs (flaky: each candidate ran up to " << r.repeats << " times)";
    if (r.out_of_budget) rd << "; the budget ran out, so it may reduce further";
    rd << ".\n\n**Reduced graph** (model.onnx; inputs and our expected outputs in test_data_set_0/):\n\n```text\n" << graph_text << "```\n\n";
    rd << "**Rerun.** Build and run the standalone test (it fails while the bug is there):\n\n```sh\n"
       << "cmake -S . -B build -DCMAKE_PREFIX_PATH=<tensoracle's install prefix> && cmake --build build && ./build/repro\n```\n";
    if (!info.rerun.empty()) rd << "\nReduced with:\n\n```sh\n" << info.rerun << "\n```\n";
    rd << "\nmanifest.json holds the same facts for scripts; original.txt the graph before reduction.\n";
    write_text("README.md", rd.str());
    detail::write_json(dir / "manifest.json", m);  // last: a bundle with a manifest is complete
    return m;
}

/// A case to reduce from disk: a model.onnx, or a case folder in the ONNX test layout
/// (model.onnx, test_data_set_0/input_<k>.pb; case.json's seed and index when there).
/// Without input files the inputs are random (floats in [-1, 1), integers in [0, 4),
/// from `seed`); a model they do not run on is an error that says to give inputs.
[[nodiscard]] inline io::generated_case load_case(const std::filesystem::path& model_or_case, std::uint64_t seed = 0) {
    const std::string where = "tensoracle::campaign::load_case(" + model_or_case.string() + ")";
    if (!std::filesystem::exists(model_or_case)) throw error(where, "no such file or folder");
    const std::filesystem::path dir = std::filesystem::is_directory(model_or_case) ? model_or_case : model_or_case.parent_path();
    const std::filesystem::path model = std::filesystem::is_directory(model_or_case) ? model_or_case / "model.onnx" : model_or_case;
    if (!std::filesystem::exists(model)) throw error(where, "no model.onnx in the folder");
    auto g = io::load_model(model);
    std::uint64_t index = 0;
    std::string config_hash;
    if (std::filesystem::exists(dir / "case.json")) {
        try {
            std::ifstream f(dir / "case.json");
            const auto j = nlohmann::json::parse(f);
            seed = j.value("seed", seed);
            index = j.value("index", std::uint64_t{0});
            config_hash = j.value("config_hash", std::string());
        } catch (const std::exception& e) {
            throw error(where, std::string("case.json is not readable: ") + e.what());
        }
    }
    value_map inputs;
    const auto data = dir / "test_data_set_0";
    std::vector<const graph::value_info*> fed;
    for (const auto& in : g.inputs) {
        if (!g.initializers.count(in.name)) fed.push_back(&in);
    }
    if (std::filesystem::exists(data / "input_0.pb") || fed.empty()) {
        for (std::size_t k = 0; k < fed.size(); ++k) {
            const auto file = data / ("input_" + std::to_string(k) + ".pb");
            if (!std::filesystem::exists(file)) throw error(where, "graph input '" + fed[k]->name + "' has no " + file.string());
            auto t = io::load_tensor(file);
            if (t.element_dtype() != fed[k]->type || (fed[k]->shape && *fed[k]->shape != t.shape())) {
                throw error(where, file.string() + " holds " + std::string(name(t.element_dtype())) + tensoracle::to_string(t.shape()) + ", but graph input '" +
                                       fed[k]->name + "' is declared " + std::string(name(fed[k]->type)) +
                                       (fed[k]->shape ? tensoracle::to_string(*fed[k]->shape) : std::string("[?]")));
            }
            inputs.emplace(fed[k]->name, std::move(t));
        }
    } else {
        rng r(seed);
        for (const auto* in : fed) {
            if (!in->shape) throw error(where, "graph input '" + in->name + "' has no static shape and there are no input files to take one from");
            const bool floating = info(in->type).is_floating;
            inputs.emplace(in->name, r.uniform_tensor(in->type, *in->shape, floating ? -1.0 : 0.0, in->type == dtype::boolean ? 2.0 : floating ? 1.0 : 4.0));
        }
    }
    std::erase_if(g.inputs, [&](const graph::value_info& v) { return g.initializers.count(v.name) > 0; });
    io::generated_case c;
    try {
        c = evaluate_case(std::move(g), std::move(inputs), seed, index);
    } catch (const error& e) {
        throw error(where, std::string("the reference cannot run it on these inputs (give a case folder with test_data_set_0/): ") + e.what());
    }
    c.config_hash = config_hash;
    return c;
}

/// The campaign's second step: every signature in `dir`/summary.json gets its smallest
/// case reduced (under the backends of the signature, with `judging`) into a bundle at
/// `dir`/reduced/<signature id>/, unless one is there already (a resumed campaign).
/// summary.json and summary.txt then name each bundle and its size. Returns the summary.
inline nlohmann::json reduce_signatures(const std::filesystem::path& dir, const std::vector<std::unique_ptr<backend>>& prototypes,
                                        const judge_options& judging, const reduce_options& options,
                                        const bundle_info& info = {},
                                        const std::function<void(const std::string&, const reduce_progress&)>& on_progress = {}) {
    const char* where = "tensoracle::campaign::reduce_signatures";
    nlohmann::json summary;
    {
        std::ifstream f(dir / "summary.json");
        if (!f) throw error(where, "no summary.json in " + dir.string());
        summary = nlohmann::json::parse(f);
    }
    for (auto& s : summary["signatures"]) {
        const auto id = s["id"].get<std::string>();
        const auto bundle = dir / "reduced" / id;
        nlohmann::json done;
        if (std::filesystem::exists(bundle / "manifest.json")) {
            std::ifstream f(bundle / "manifest.json");
            done = nlohmann::json::parse(f, nullptr, false);
        }
        if (done.is_object() && done.contains("reduced")) {
            s["bundle"] = "reduced/" + id;
            s["reduced_nodes"] = done["reduced"]["nodes"];
            continue;
        }
        // The backends of the signature's system, as the campaign ran them: a configuration's
        // "unsupported" is a compile failure only beside a sibling that runs the case.
        const auto b = s["backend"].get<std::string>();
        const auto first = b.substr(0, b.find(" vs "));
        const auto family = first.substr(0, first.find('-'));
        std::vector<std::unique_ptr<backend>> backends;
        for (const auto& proto : prototypes) {
            if (proto->name().substr(0, proto->name().find('-')) == family) backends.push_back(proto->clone());
        }
        if (std::none_of(backends.begin(), backends.end(), [&](const auto& x) { return x->name() == first; })) {
            s["reduction"] = "not reduced: backend " + b + " is not in this run";
            continue;
        }
        // A metamorphic signature compares two runs; its mutant's own failure (the same
        // backend against the reference on the mutant) is what reduces alone.
        std::string keep = id;
        if (s.value("oracle", std::string()) == "metamorphic") {
            if (!s.contains("reduce_as")) {
                s["reduction"] = "not reduced: the mutant fails only against its original, not against the reference";
                continue;
            }
            keep = s["reduce_as"].get<std::string>();
        }
        const auto scratch = dir / ".work" / "reduce";
        try {
            const auto original = load_case(dir / "cases" / s["case"].get<std::string>());
            signature_check check(std::move(backends), judging, scratch, keep);
            const auto r = reduce(original, check, options, [&](const reduce_progress& p) {
                if (on_progress) on_progress(id, p);
            });
            (void)write_bundle(r, check, bundle, info);
            s["bundle"] = "reduced/" + id;
            s["reduced_nodes"] = r.reduced.model.nodes.size();
        } catch (const original_does_not_fail& e) {
            s["reduction"] = std::string("not reduced: ") + e.what();
        } catch (const backend_unavailable&) {
            throw;
        } catch (const error& e) {
            s["reduction"] = std::string("not reduced: ") + e.what();
        }
        std::error_code ec;
        std::filesystem::remove_all(dir / ".work", ec);
    }
    detail::write_json(dir / "summary.json", summary);
    std::ofstream t(dir / "summary.txt");
    t << campaign_runner::summary_text(summary);
    return summary;
}

}  // namespace tensoracle::campaign
// ---- end tensoracle/campaign/reduce.hpp ----
// ---- begin tensoracle/campaign/report.hpp ----
// tensoracle: a campaign folder for a person, and campaign folders merged.
//
//   write_report(dir)             dir/report.html: one self-contained page (no script,
//                                 no server): settings, outcome tables, GraphNet's S_t /
//                                 ES_t curves over tolerance levels and an error
//                                 histogram as inline SVG, the support matrix when the
//                                 backends were probed, one row per signature linking
//                                 to its case and its reduced bundle
//   merge_campaigns(dirs, out)    shards (or campaigns of one setting) into one folder:
//                                 results, cases and bundles copied, the summary grouped
//                                 again, signatures combined with their counts
//
// The SVG comes from `svg_chart`, a small writer with axes, ticks, units, labels and
// a legend, tested on its own. Needs nlohmann/json (and what campaign.hpp needs).

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>


namespace tensoracle::campaign {

/// Text made safe for HTML and SVG (element content and attribute values).
[[nodiscard]] inline std::string html_escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

/// One chart: lines (x, y points per series) or grouped bars (one value per category
/// per series), with axes, ticks, axis labels with their units, a title and a legend.
struct svg_chart {
    struct series {
        std::string name;
        std::vector<std::pair<double, double>> points;  ///< lines: (x, y)
        std::vector<double> bars;                       ///< bars: one value per category
    };
    std::string title, x_label, y_label;
    std::vector<std::string> categories;  ///< bars: the x axis' labels
    std::vector<series> data;
    int width = 640, height = 360;

    [[nodiscard]] std::string render() const {
        static constexpr const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
        const double left = 64, right = 150, top = 36, bottom = 52;
        const double pw = width - left - right, ph = height - top - bottom;
        const bool bars = !categories.empty();
        double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
        bool any = false;
        for (const auto& s : data) {
            for (const auto& [x, y] : s.points) {
                if (!std::isfinite(x) || !std::isfinite(y)) continue;
                if (!any) {
                    x0 = x1 = x;
                    y0 = y1 = y;
                    any = true;
                }
                x0 = std::min(x0, x);
                x1 = std::max(x1, x);
                y0 = std::min(y0, y);
                y1 = std::max(y1, y);
            }
            for (const double v : s.bars) {
                if (std::isfinite(v)) y1 = std::max(y1, v);
            }
        }
        if (bars) {
            y0 = 0;
            x0 = 0;
            x1 = static_cast<double>(categories.size());
        }
        y0 = std::min(y0, 0.0);
        if (y1 <= y0) y1 = y0 + 1;
        if (x1 <= x0) x1 = x0 + 1;
        y1 += 0.05 * (y1 - y0);
        auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
        auto py = [&](double y) { return top + ph - (y - y0) / (y1 - y0) * ph; };
        std::ostringstream os;
        os.precision(4);
        os << "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" class=\"chart\" width=\"" << width << "\" height=\"" << height
           << "\" viewBox=\"0 0 " << width << ' ' << height << "\"><title>" << html_escape(title) << "</title>\n";
        os << "<text x=\"" << width / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" << html_escape(title)
           << "</text>\n";
        // Axes, ticks and grid.
        os << "<g class=\"axes\" stroke=\"#333\" font-size=\"11\"><line x1=\"" << left << "\" y1=\"" << top + ph << "\" x2=\"" << left + pw
           << "\" y2=\"" << top + ph << "\"/><line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << top + ph << "\"/>\n";
        for (const double v : ticks(y0, y1, 5)) {
            os << "<line x1=\"" << left - 4 << "\" y1=\"" << py(v) << "\" x2=\"" << left + pw << "\" y2=\"" << py(v)
               << "\" stroke=\"#ddd\"/><text x=\"" << left - 8 << "\" y=\"" << py(v) + 4 << "\" text-anchor=\"end\" stroke=\"none\">" << tick(v)
               << "</text>\n";
        }
        if (bars) {
            for (std::size_t c = 0; c < categories.size(); ++c) {
                os << "<text x=\"" << px(static_cast<double>(c) + 0.5) << "\" y=\"" << top + ph + 16 << "\" text-anchor=\"middle\" stroke=\"none\">"
                   << html_escape(categories[c]) << "</text>\n";
            }
        } else {
            for (const double v : ticks(x0, x1, 7)) {
                os << "<line x1=\"" << px(v) << "\" y1=\"" << top + ph << "\" x2=\"" << px(v) << "\" y2=\"" << top + ph + 4 << "\"/><text x=\"" << px(v)
                   << "\" y=\"" << top + ph + 16 << "\" text-anchor=\"middle\" stroke=\"none\">" << tick(v) << "</text>\n";
            }
        }
        os << "</g>\n<text x=\"" << left + pw / 2 << "\" y=\"" << height - 12 << "\" text-anchor=\"middle\" font-size=\"12\">" << html_escape(x_label)
           << "</text>\n<text transform=\"translate(16," << top + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">"
           << html_escape(y_label) << "</text>\n";
        // Data.
        const double groups = static_cast<double>(std::max<std::size_t>(data.size(), 1));
        for (std::size_t k = 0; k < data.size(); ++k) {
            const auto& s = data[k];
            const char* color = colors[k % 8];
            if (bars) {
                for (std::size_t c = 0; c < s.bars.size() && c < categories.size(); ++c) {
                    const double w = 0.8 / groups;
                    const double x = static_cast<double>(c) + 0.1 + w * static_cast<double>(k);
                    os << "<rect class=\"bar\" x=\"" << px(x) << "\" y=\"" << py(s.bars[c]) << "\" width=\"" << std::max(1.0, px(x + w) - px(x))
                       << "\" height=\"" << std::max(0.0, py(0) - py(s.bars[c])) << "\" fill=\"" << color << "\"><title>" << html_escape(s.name) << ", "
                       << html_escape(categories[c]) << ": " << s.bars[c] << "</title></rect>\n";
                }
            } else {
                os << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
                for (const auto& [x, y] : s.points) {
                    if (std::isfinite(x) && std::isfinite(y)) os << px(x) << ',' << py(y) << ' ';
                }
                os << "\"><title>" << html_escape(s.name) << "</title></polyline>\n";
            }
            const double ly = top + 14 + 18 * static_cast<double>(k);
            os << "<rect x=\"" << left + pw + 12 << "\" y=\"" << ly - 9 << "\" width=\"12\" height=\"10\" fill=\"" << color << "\"/><text x=\""
               << left + pw + 28 << "\" y=\"" << ly << "\" font-size=\"11\">" << html_escape(s.name) << "</text>\n";
        }
        os << "</svg>\n";
        return os.str();
    }

private:
    /// Round-valued ticks (1, 2 or 5 times a power of ten apart) covering [lo, hi], about `n` of them.
    [[nodiscard]] static std::vector<double> ticks(double lo, double hi, int n) {
        const double raw = (hi - lo) / n, mag = std::pow(10.0, std::floor(std::log10(raw)));
        double step = mag;
        for (const double m : {1.0, 2.0, 5.0, 10.0}) {
            step = m * mag;
            if (step >= raw) break;
        }
        std::vector<double> out;
        for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) out.push_back(std::abs(v) < 1e-12 * step ? 0.0 : v);
        return out;
    }
    [[nodiscard]] static std::string tick(double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, std::abs(v) >= 1000 || (std::abs(v) < 0.01 && v != 0) ? "%.1e" : "%.3g", v);
        return buf;
    }
};

namespace detail {

/// Every line of a campaign folder's results.jsonl (a line cut by a kill is skipped).
[[nodiscard]] inline std::vector<nlohmann::json> read_results(const std::filesystem::path& dir) {
    std::vector<nlohmann::json> out;
    std::ifstream f(dir / "results.jsonl");
    std::string line;
    while (std::getline(f, line)) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (is_result_line(j)) out.push_back(std::move(j));
    }
    return out;
}

[[nodiscard]] inline nlohmann::json read_json_file(const std::filesystem::path& p, const char* where) {
    std::ifstream f(p);
    if (!f) throw error(where, "no " + p.string());
    auto j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_discarded()) throw error(where, p.string() + " is not readable JSON");
    return j;
}

/// GraphNet's sample of one backend's result on one case (nullopt: unsupported or no baseline).
[[nodiscard]] inline std::optional<benchmark_sample> score_sample(const nlohmann::json& line, const nlohmann::json& r) {
    const auto oc = r.value("outcome", std::string());
    if (oc == "unsupported" || oc == "not_compared") return std::nullopt;
    benchmark_sample s;
    const int code = r.value("graphnet_error_code", 0);
    if (code == 2) {
        s.failure = outcome::runtime_crash;
        return s;
    }
    if (code == 3) {
        s.failure = outcome::compile_failure;
        return s;
    }
    const double ref = line.value("reference_seconds", 0.0), mine = r.value("seconds", 0.0);
    if (!(ref > 0) || !(mine > 0)) return std::nullopt;
    s.failure = code == 1 ? outcome::accuracy : outcome::pass;
    s.speedup = ref / mine;
    if (r.contains("passing_level")) {
        s.passing_level = r["passing_level"].get<int>();
    } else if (r.contains("min_passing_level")) {
        s.passing_level = r["min_passing_level"].get<int>();
    } else if (oc == "pass" || oc == "reference_precision") {
        s.passing_level = -4;  // journals of earlier versions: passed at the campaign's level
    }
    return s;
}

}  // namespace detail

/// Writes `dir`/report.html from its summary.json, results.jsonl and campaign.json;
/// returns its path.
inline std::filesystem::path write_report(const std::filesystem::path& dir) {
    const char* where = "tensoracle::campaign::write_report";
    const auto summary = detail::read_json_file(dir / "summary.json", where);
    const auto settings = std::filesystem::exists(dir / "campaign.json") ? detail::read_json_file(dir / "campaign.json", where) : nlohmann::json::object();
    const auto lines = detail::read_results(dir);
    std::ostringstream h;
    h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tensoracle campaign report</title>\n<style>\n"
         "body{font-family:sans-serif;margin:24px;max-width:1200px;color:#222}table{border-collapse:collapse;margin:8px 0 20px}"
         "th,td{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}"
         "code{font-size:12px}.note{color:#666;font-size:13px}\n</style></head><body>\n";
    h << "<h1>tensoracle campaign report</h1>\n<p class=\"note\">" << summary.value("cases", 0) << " of " << summary.value("requested", 0)
      << " cases, seed " << summary.value("seed", 0) << ", config " << html_escape(summary.value("config_hash", std::string())) << ", tolerance level "
      << summary.value("level", -4.0) << " (GraphNet)";
    if (summary.contains("merged_from")) h << ", merged from " << summary["merged_from"].size() << " folders";
    h << ".</p>\n";
    // The first screen: what is new and real (campaign/triage.hpp), before anything else.
    {
        std::size_t new_count = 0;
        for (const auto& g : summary["signatures"]) new_count += g.value("triage", std::string("new")) == "new" ? 1 : 0;
        const auto t = summary.value("triage", nlohmann::json::object());
        h << "<h2>New and real</h2>\n<p>" << new_count << " new signature(s); " << t.value("known", 0) << " known (confirmed findings), "
          << t.value("judged", 0) << " judged not bugs (precision, specification gaps), " << t.value("limitation", 0)
          << " limitations (valid models a system refuses), listed at the end.</p>\n";
        if (new_count > 0) {
            h << "<table id=\"new\"><tr><th class=\"l\">id</th><th>cases</th><th class=\"l\">backend</th><th class=\"l\">outcome</th><th class=\"l\">where</th></tr>\n";
            for (const auto& g : summary["signatures"]) {
                if (g.value("triage", std::string("new")) != "new") continue;
                h << "<tr><td class=\"l\"><code>" << html_escape(g.value("id", std::string())) << "</code></td><td>" << g.value("count", 0)
                  << "</td><td class=\"l\">" << html_escape(g.value("backend", std::string())) << "</td><td class=\"l\">"
                  << html_escape(g.value("outcome", std::string())) << "</td><td class=\"l\">" << html_escape(g.value("where", std::string())) << "</td></tr>\n";
            }
            h << "</table>\n";
        }
    }
    if (summary.contains("rewrites")) {
        // What the systems rewrote comes first: a case reaches a compiler's bugs through it.
        h << "<h2>What the backends rewrote</h2>\n<p class=\"note\">From the graph each backend reported it executed "
             "(its rewritten.onnx against the case's model.onnx): nodes that vanished, appeared or changed, grouped by the tensors they share.</p>\n";
        for (const auto& [name, t] : summary["rewrites"].items()) {
            h << "<p>" << html_escape(name) << ": " << t.value("rewritten", 0) << " of " << t.value("reported", 0)
              << " reported graphs changed by an optimization; " << t.value("optimization_kinds", 0) << " optimization kinds.</p>\n"
              << "<table class=\"rewrites\"><tr><th class=\"l\">kind</th><th class=\"l\">class</th><th>cases</th><th>events</th><th class=\"l\">first case</th></tr>\n";
            for (const auto& k : t["kinds"]) {
                h << "<tr><td class=\"l\"><code>" << html_escape(k.value("kind", std::string())) << "</code></td><td class=\"l\">"
                  << html_escape(k.value("class", std::string())) << "</td><td>" << k.value("cases", 0) << "</td><td>" << k.value("events", 0)
                  << "</td><td class=\"l\">" << html_escape(k.value("first_case", std::string())) << "</td></tr>\n";
            }
            h << "</table>\n";
        }
    }
    if (settings.contains("backends")) {
        h << "<h2>Backends</h2>\n<table><tr><th class=\"l\">name</th><th class=\"l\">command</th></tr>\n";
        for (const auto& b : settings["backends"]) {
            h << "<tr><td class=\"l\">" << html_escape(b.value("name", std::string())) << "</td><td class=\"l\"><code>"
              << html_escape(b.value("command", std::string())) << "</code></td></tr>\n";
        }
        h << "</table>\n";
    }
    auto outcome_table = [&](const nlohmann::json& rows, const std::string& title, const std::string& id) {
        std::vector<std::string> cols;
        for (const auto c : all_outcomes) cols.emplace_back(to_string(c));
        for (const auto& [name, r] : rows.items()) {
            for (const auto& [k, v] : r["outcomes"].items()) {
                if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
            }
        }
        std::vector<std::string> shown;
        for (const auto& c : cols) {
            bool used = c == "pass";
            for (const auto& [name, r] : rows.items()) used = used || r["outcomes"].value(c, 0) > 0;
            if (used) shown.push_back(c);
        }
        h << "<h2>" << html_escape(title) << "</h2>\n<table id=\"" << id << "\"><tr><th class=\"l\"></th>";
        for (const auto& c : shown) h << "<th>" << html_escape(c) << "</th>";
        h << "</tr>\n";
        for (const auto& [name, r] : rows.items()) {
            h << "<tr><td class=\"l\">" << html_escape(name) << "</td>";
            for (const auto& c : shown) h << "<td>" << r["outcomes"].value(c, 0) << "</td>";
            h << "</tr>\n";
        }
        h << "</table>\n";
    };
    outcome_table(summary["backends"], "Outcomes per backend", "outcomes");
    if (summary.contains("pairs")) outcome_table(summary["pairs"], "Backend vs backend", "pairs");
    if (summary.contains("metamorphic")) outcome_table(summary["metamorphic"], "Metamorphic oracle: each backend on a mutant vs itself on the original", "metamorphic");

    // GraphNet's scores over tolerance levels: the baseline is our reference interpreter's time on the case.
    std::map<std::string, std::vector<benchmark_sample>> samples;
    std::map<std::string, std::vector<double>> rel_errors;
    for (const auto& line : lines) {
        if (!line.contains("backends")) continue;
        for (const auto& [name, r] : line["backends"].items()) {
            if (const auto s = detail::score_sample(line, r)) samples[name].push_back(*s);
            if (r.contains("max_rel_error")) {
                // JSON has no infinity: an infinite relative error (against a reference 0) is written as null.
                const auto& e = r["max_rel_error"];
                rel_errors[name].push_back(e.is_number() ? e.get<double>() : std::numeric_limits<double>::infinity());
            }
        }
    }
    svg_chart scores;
    scores.title = "S_t (t <= 0) and ES_t (t > 0) over tolerance levels";
    scores.x_label = "tolerance level t (GraphNet; t = -4 is the campaign's comparison)";
    scores.y_label = "score (no unit)";
    for (const auto& [name, v] : samples) {
        svg_chart::series s{name, {}, {}};
        for (int t = -10; t <= 3; ++t) s.points.emplace_back(t, speedup_score(v, t).score);
        scores.data.push_back(std::move(s));
    }
    svg_chart hist;
    hist.title = "Largest relative error per case, against the reference";
    hist.x_label = "log10 of the largest relative error of a case's outputs";
    hist.y_label = "cases";
    const std::vector<std::pair<std::string, double>> bins = {{"exact", -1e300}, {"<-12", -12}, {"-12..-9", -9}, {"-9..-6", -6}, {"-6..-4", -4},
                                                              {"-4..-2", -2}, {"-2..0", 0},   {">=0", 1e300}};
    for (const auto& b : bins) hist.categories.push_back(b.first);
    for (const auto& [name, v] : rel_errors) {
        svg_chart::series s{name, {}, std::vector<double>(bins.size(), 0.0)};
        for (const double e : v) {
            if (!(e > 0)) {
                s.bars[0] += 1;
                continue;
            }
            const double l = std::log10(e);
            for (std::size_t k = 1; k < bins.size(); ++k) {
                if (l < bins[k].second || k + 1 == bins.size()) {
                    s.bars[k] += 1;
                    break;
                }
            }
        }
        hist.data.push_back(std::move(s));
    }
    h << "<h2>Scores and errors</h2>\n<p class=\"note\">GraphNet's scores: the geometric mean of rectified speedups, where the speedup "
         "of a case is our reference interpreter's time over the backend's (its process and file exchange included, so below 1 for "
         "a separate process); a case that fails at level t scores b = 0.1; ES_t forgives error code c once t &gt;= c (1 accuracy, "
         "2 runtime, 3 compile). Unsupported cases are left out.</p>\n";
    if (!scores.data.empty()) h << scores.render();
    if (!hist.data.empty()) h << hist.render();

    // Support matrix, when the backends were probed (support.json).
    if (std::filesystem::exists(dir / "support.json")) {
        const auto support = detail::read_json_file(dir / "support.json", where);
        h << "<h2>Support matrix</h2>\n<p class=\"note\">From single-op probes (cached per backend version); the generator drew only "
             "supported (op, dtype) pairs.</p>\n<table id=\"support\"><tr><th class=\"l\">op</th>";
        std::vector<std::string> names;
        for (const auto& [name, b] : support["backends"].items()) names.push_back(name);
        for (const auto& n : names) h << "<th>" << html_escape(n) << "</th>";
        h << "</tr>\n";
        std::set<std::string> ops;
        for (const auto& n : names) {
            for (const auto& [op, d] : support["backends"][n]["ops"].items()) ops.insert(op);
        }
        for (const auto& op : ops) {
            h << "<tr><td class=\"l\">" << html_escape(op) << "</td>";
            for (const auto& n : names) {
                std::string cell;
                if (support["backends"][n]["ops"].contains(op)) {
                    for (const auto& d : support["backends"][n]["ops"][op]) cell += (cell.empty() ? "" : " ") + d.get<std::string>();
                }
                h << "<td class=\"l\">" << html_escape(cell.empty() ? "-" : cell) << "</td>";
            }
            h << "</tr>\n";
        }
        h << "</table>\n";
    }

    h << "<h2>Signatures</h2>\n<table id=\"signatures\"><tr><th class=\"l\">id</th><th>cases</th><th class=\"l\">backend</th><th class=\"l\">outcome</th>"
         "<th class=\"l\">oracle</th><th class=\"l\">where</th><th class=\"l\">smallest case</th><th class=\"l\">reduced</th><th class=\"l\">triage</th></tr>\n";
    for (const auto& g : summary["signatures"]) {
        const auto id = g.value("id", std::string()), c = g.value("case", std::string());
        h << "<tr><td class=\"l\"><code>" << html_escape(id) << "</code></td><td>" << g.value("count", 0) << "</td><td class=\"l\">"
          << html_escape(g.value("backend", std::string())) << "</td><td class=\"l\">" << html_escape(g.value("outcome", std::string()))
          << "</td><td class=\"l\">" << html_escape(g.value("oracle", std::string())) << "</td><td class=\"l\">" << html_escape(g.value("where", std::string()))
          << "</td><td class=\"l\"><a href=\"cases/" << html_escape(c) << "/model.txt\">" << html_escape(c) << "</a> (" << g.value("case_nodes", 0)
          << " nodes)</td><td class=\"l\">";
        if (g.contains("bundle")) {
            h << "<a href=\"" << html_escape(g["bundle"].get<std::string>()) << "/README.md\">" << g.value("reduced_nodes", 0) << " node(s)</a>";
        } else {
            h << html_escape(g.value("reduction", std::string("-")));
        }
        h << "</td><td class=\"l\">" << html_escape(g.value("triage", std::string("new")))
          << (g.contains("finding") ? ": " + html_escape(g["finding"].get<std::string>()) : std::string()) << "</td></tr>\n";
    }
    h << "</table>\n</body></html>\n";
    const auto path = dir / "report.html";
    std::ofstream out(path, std::ios::binary);
    if (!out || !(out << h.str())) throw error(where, "cannot write " + path.string());
    return path;
}

/// Merges campaign folders of one setting (shards, or runs of other case ranges) into
/// `out`: results (each case index once), cases and reduced bundles copied, the summary
/// grouped again (signatures combined with their counts) and report.html written.
/// Folders of other settings (seed, config, level, backends, mutants) are refused.
inline nlohmann::json merge_campaigns(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out) {
    const char* where = "tensoracle::campaign::merge_campaigns";
    if (dirs.empty()) throw error(where, "no campaign folder to merge");
    nlohmann::json base;
    std::vector<std::string> backends;
    std::uint64_t requested = 0;
    for (std::size_t k = 0; k < dirs.size(); ++k) {
        const auto settings = detail::read_json_file(dirs[k] / "campaign.json", where);
        if (k == 0) {
            base = settings;
            for (const auto& b : settings["backends"]) backends.push_back(b.value("name", std::string()));
        } else {
            for (const char* key : {"seed", "config_hash", "level", "backends", "float64_oracle", "recheck", "localize", "compare_backends", "mutants"}) {
                if (settings.value(key, nlohmann::json()) != base.value(key, nlohmann::json())) {
                    throw error(where, dirs[k].string() + " holds a campaign with another '" + key + "' than " + dirs[0].string() + " (" +
                                           settings.value(key, nlohmann::json()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " vs " + base.value(key, nlohmann::json()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ")");
                }
            }
        }
        requested += detail::read_json_file(dirs[k] / "summary.json", where).value("requested", std::uint64_t{0});
    }
    std::filesystem::create_directories(out / "cases");
    if (std::filesystem::exists(out / "results.jsonl")) throw error(where, out.string() + " already holds a campaign: merge into a new folder");
    std::ofstream journal(out / "results.jsonl");
    std::set<std::uint64_t> seen;
    for (const auto& d : dirs) {
        for (const auto& line : detail::read_results(d)) {
            if (seen.insert(line["index"].get<std::uint64_t>()).second) journal << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        }
        for (const char* sub : {"cases", "reduced"}) {
            if (!std::filesystem::exists(d / sub)) continue;
            for (const auto& e : std::filesystem::directory_iterator(d / sub)) {
                const auto to = out / sub / e.path().filename();
                if (std::filesystem::exists(to)) continue;
                std::filesystem::create_directories(to.parent_path());
                std::filesystem::copy(e.path(), to, std::filesystem::copy_options::recursive);
            }
        }
    }
    journal.close();
    auto settings = base;
    settings.erase("shard");
    settings["merged_from"] = nlohmann::json::array();
    for (const auto& d : dirs) settings["merged_from"].push_back(d.string());
    detail::write_json(out / "campaign.json", settings);
    summary_scope sc;
    sc.dir = out;
    sc.backends = backends;
    sc.includes = [](std::uint64_t) { return true; };
    sc.requested = requested;
    sc.level = base.value("level", -4.0);
    if (base.contains("known_findings") && base["known_findings"].is_object()) {
        for (const auto& [id, name] : base["known_findings"].items()) {
            if (name.is_string()) sc.known.by_signature.emplace(id, name.get<std::string>());
        }
    }
    sc.seed = base.value("seed", std::uint64_t{0});
    sc.config_hash = base.value("config_hash", std::string());
    sc.mutants = base.contains("mutants") && !(base["mutants"].is_number() && base["mutants"].get<int>() == 0);
    auto s = write_summary(sc);
    s["merged_from"] = settings["merged_from"];
    detail::write_json(out / "summary.json", s);
    (void)write_report(out);
    return s;
}

}  // namespace tensoracle::campaign
// ---- end tensoracle/campaign/report.hpp ----
// ---- end tensoracle/campaign.hpp ----
