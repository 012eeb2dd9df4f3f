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
#pragma once

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

#include "tensoracle/core/error.hpp"

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
