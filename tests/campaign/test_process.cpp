// Processes of their own for the systems under test: word splitting, exit
// classes, time-outs that kill a whole process group, persistent workers.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <tensoracle/campaign/process.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace campaign_process_test {

namespace tc = tensoracle::campaign;
using words = std::vector<std::string>;

TEST_CASE("split_command splits like a POSIX shell, without expansion") {
    CHECK(tc::split_command("mytool run {model} {inputs}") == words{"mytool", "run", "{model}", "{inputs}"});
    CHECK(tc::split_command("  a   'b c'  \"d \\\"e\\\" $HOME\" f\\ g ") == words{"a", "b c", "d \"e\" $HOME", "f g"});
    CHECK(tc::split_command("x''y \"\"") == words{"xy", ""});
    CHECK(tc::split_command("'it''s'") == words{"its"});
    CHECK_THROWS_WITH_AS((void)tc::split_command("a 'b"), doctest::Contains("unterminated single quote"), tensoracle::error);
    CHECK_THROWS_WITH_AS((void)tc::split_command("a \"b"), doctest::Contains("unterminated double quote"), tensoracle::error);
    CHECK_THROWS_WITH_AS((void)tc::split_command("a \\"), doctest::Contains("trailing backslash"), tensoracle::error);
    CHECK_THROWS_WITH_AS((void)tc::split_command("   "), doctest::Contains("empty command"), tensoracle::error);
}

TEST_CASE("run_process: exit codes, output, signals, a missing executable") {
    auto r = tc::run_process({"sh", "-c", "echo out; echo err >&2; exit 7"});
    CHECK(r.kind == tc::exit_kind::exited);
    CHECK(r.exit_code == 7);
    CHECK(r.out == "out\n");
    CHECK(r.err == "err\n");

    r = tc::run_process({"sh", "-c", "kill -SEGV $$"});
    CHECK(r.kind == tc::exit_kind::signalled);
    CHECK(r.signal == SIGSEGV);

    r = tc::run_process({"/nonexistent/tool", "x"});
    CHECK(r.kind == tc::exit_kind::not_started);
    CHECK(r.error_message.find("No such file") != std::string::npos);

    tc::process_options o;
    o.input = "hello";
    r = tc::run_process({"cat"}, o);
    CHECK(r.out == "hello");

    o = {};
    o.capture_limit = 10;
    r = tc::run_process({"sh", "-c", "yes | head -c 100000"}, o);
    CHECK(r.out.size() == 10);
    CHECK(r.out_truncated);
}

TEST_CASE("run_process: children run under the backends' memory limit, and fail an allocation past it") {
    struct restore {
        ~restore() { tc::set_backend_memory_limit(0); }
    } at_end;
    tc::set_backend_memory_limit(std::uint64_t{64} << 20);
    auto r = tc::run_process({"sh", "-c", "ulimit -d"});
    CHECK(r.out == "65536\n");  // KiB
    // 512 MiB asked under a 64 MiB limit: the allocation fails in the child, not the machine.
    r = tc::run_process({"python3", "-c", "b = bytearray(512 << 20); print(len(b))"});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("MemoryError") != std::string::npos);
    tc::set_backend_memory_limit(0);
    r = tc::run_process({"sh", "-c", "ulimit -d"});
    CHECK(r.out != "65536\n");
}

TEST_CASE("run_process: a time-out kills the whole process group, grandchildren included") {
    const auto start = std::chrono::steady_clock::now();
    // The grandchild keeps the pipes open: waiting for EOF alone would hang for 30 s.
    const auto r = tc::run_process({"sh", "-c", "sleep 30 & sleep 30"}, tc::process_options::with_timeout(0.5));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(r.kind == tc::exit_kind::timed_out);
    CHECK(s < 5.0);
}

TEST_CASE("run_forked: a crash, an exception and a hang in a callable are classified") {
    auto r = tc::run_forked([] { return 5; });
    CHECK(r.kind == tc::exit_kind::exited);
    CHECK(r.exit_code == 5);

    r = tc::run_forked([]() -> int { throw tensoracle::error("where", "what went wrong"); });
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("what went wrong") != std::string::npos);

    r = tc::run_forked([]() -> int { ::raise(SIGKILL); return 0; });
    CHECK(r.kind == tc::exit_kind::signalled);
    CHECK(r.signal == SIGKILL);

    r = tc::run_forked([]() -> int { for (;;) ::pause(); }, tc::process_options::with_timeout(0.3));
    CHECK(r.kind == tc::exit_kind::timed_out);
}

TEST_CASE("worker_process: one reply line per request, restarted after a crash or a hang") {
    // Replies "ok <line>"; dies on "die", never answers "hang".
    tc::worker_process w({"sh", "-c",
                          "while read l; do case $l in die) kill -ABRT $$;; hang) sleep 60;; *) echo \"ok $l\";; esac; done"});
    auto r = w.ask("a", 5);
    REQUIRE(r.line);
    CHECK(*r.line == "ok a");
    r = w.ask("b", 5);
    CHECK(*r.line == "ok b");
    CHECK(w.starts() == 1);

    r = w.ask("die", 5);
    CHECK_FALSE(r.line);
    CHECK(r.process.kind == tc::exit_kind::signalled);
    CHECK(r.process.signal == SIGABRT);

    r = w.ask("c", 5);
    REQUIRE(r.line);
    CHECK(*r.line == "ok c");
    CHECK(r.restarted);
    CHECK(w.starts() == 2);

    r = w.ask("hang", 0.3);
    CHECK_FALSE(r.line);
    CHECK(r.process.kind == tc::exit_kind::timed_out);
    r = w.ask("d", 5);
    CHECK(*r.line == "ok d");
    CHECK(w.starts() == 3);

    tc::worker_process missing({"/nonexistent/worker"});
    CHECK(missing.ask("x", 1).process.kind == tc::exit_kind::not_started);

    // A worker that exits at once (closing its stdin) is a death, not a hang or a crash of ours.
    tc::worker_process quits({"sh", "-c", "exit 4"});
    r = quits.ask("x", 5);
    CHECK_FALSE(r.line);
    CHECK(r.process.kind == tc::exit_kind::exited);
    CHECK(r.process.exit_code == 4);
}

// Descriptors open in the calling process (3 .. 1023), counted without allocating:
// this also runs in a forked child.
int open_descriptors() {
    int n = 0;
    for (int fd = 3; fd < 1024; ++fd) n += ::fcntl(fd, F_GETFD) != -1 ? 1 : 0;
    return n;
}

TEST_CASE("a forked child holds no copy of another live child's pipes") {
    // A copy of a worker's stdin in another child would keep the worker from ever
    // seeing EOF; of a pipe's write end, keep its reader waiting for EOF.
    const auto alone = tc::run_forked([] { return open_descriptors(); });
    REQUIRE(alone.kind == tc::exit_kind::exited);
    tc::worker_process w({"sh", "-c", "while read l; do echo \"ok $l\"; done"});
    REQUIRE(w.ask("a", 5).line);
    const auto beside = tc::run_forked([] { return open_descriptors(); });
    REQUIRE(beside.kind == tc::exit_kind::exited);
    CHECK(beside.exit_code == alone.exit_code);
}

TEST_CASE("run_process: a quick child is not held up by slow children started beside it") {
    // Several threads start children at once (a campaign's lanes). A child forked while
    // another thread was between creating its pipes and closing their child ends kept
    // that pipe's write end open until it ended: a run that had finished waited for EOF
    // and was read as a hang (CI: a 3-node Add/Tanh case called a hang while planted
    // hangs slept in other lanes).
    std::atomic<bool> stop{false};
    std::vector<std::thread> slow;
    for (int t = 0; t < 6; ++t) {
        slow.emplace_back([&] {
            while (!stop) (void)tc::run_process({"sleep", "2"}, tc::process_options::with_timeout(30));
        });
    }
    double worst = 0;
    int runs = 0;
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2500)) {
        const auto r = tc::run_process({"true"}, tc::process_options::with_timeout(30));
        CHECK(r.kind == tc::exit_kind::exited);
        worst = std::max(worst, r.seconds);
        ++runs;
    }
    stop = true;
    for (auto& t : slow) t.join();
    INFO(runs << " runs");
    CHECK(worst < 1.5);
}

}  // namespace campaign_process_test
