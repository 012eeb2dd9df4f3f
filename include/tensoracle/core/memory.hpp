// tensoracle: the memory budget. Every tensor the kit allocates, and every node's
// outputs before its kernel runs, are checked against one process-wide budget, so a
// model asking for a huge tensor ends in a memory_error naming what asked and how
// much, before anything is allocated, not in a bare std::bad_alloc or a machine
// paged into the ground (a size that fits in virtual memory but not in RAM).
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>

#if __has_include(<unistd.h>)
#include <unistd.h>
#endif

#include "tensoracle/core/error.hpp"

namespace tensoracle {

/// "4.0 GiB", "512 B": a byte count for messages.
[[nodiscard]] inline std::string memory_size_text(std::uint64_t bytes) {
    static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    if (u == 0) {
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    } else {
        std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    }
    return buf;
}

/// The memory this process may use: physical memory, or the cgroup's limit where
/// that is smaller (a container, a Slurm job with cgroup confinement). 0 if unknown.
[[nodiscard]] inline std::uint64_t physical_memory_bytes() {
    std::uint64_t total = 0;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) total = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
#endif
    // cgroup v2, then v1; "max" or an absurd v1 value means no limit of its own.
    for (const char* file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream in(file);
        unsigned long long limit = 0;
        if (in >> limit && limit > 0 && (total == 0 || limit < total)) total = limit;
    }
    return total;
}

/// Parses a memory size: bytes ("1048576"), with a binary unit ("512K", "64M", "1.5G",
/// "2T", an optional "iB"/"B" after it) or a percentage of physical_memory_bytes()
/// ("50%"). Throws tensoracle::error naming `where` for anything else.
[[nodiscard]] inline std::uint64_t parse_memory_size(std::string_view text, std::string_view where = "tensoracle::parse_memory_size") {
    const std::string s(text);
    auto bad = [&](const std::string& why) {
        return error(where, "memory size '" + s + "' " + why + " (give bytes, a size such as 512M or 8G, or a percentage of physical memory such as 50%)");
    };
    std::size_t used = 0;
    double v = 0.0;
    try {
        v = std::stod(s, &used);
    } catch (const std::exception&) {
        throw bad("is not a number");
    }
    if (!std::isfinite(v) || v <= 0.0) throw bad("must be positive");
    std::string unit = s.substr(used);
    double scale = 1.0;
    if (unit == "%") {
        const std::uint64_t phys = physical_memory_bytes();
        if (phys == 0) throw bad("is a percentage, but this machine's physical memory is unknown");
        if (v > 100.0) throw bad("is over 100%");
        scale = static_cast<double>(phys) / 100.0;
    } else {
        if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "iB") unit.resize(unit.size() - 2);
        else if (unit.size() >= 2 && unit.back() == 'B') unit.pop_back();
        if (unit.empty() || unit == "B") scale = 1.0;
        else if (unit == "K" || unit == "k") scale = 1024.0;
        else if (unit == "M") scale = 1024.0 * 1024.0;
        else if (unit == "G") scale = 1024.0 * 1024.0 * 1024.0;
        else if (unit == "T") scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
        else throw bad("has an unknown unit '" + std::string(s.substr(used)) + "'");
    }
    const double bytes = v * scale;
    if (bytes < 1.0) throw bad("is under one byte");
    if (bytes >= 18446744073709551615.0) throw bad("is too large");
    return static_cast<std::uint64_t>(bytes);
}

namespace detail {
inline constexpr std::uint64_t no_memory_limit = std::numeric_limits<std::uint64_t>::max();
/// 0 until set_memory_limit: then default_memory_limit() applies.
inline std::atomic<std::uint64_t> memory_limit_set{0};
inline std::atomic<std::uint64_t> memory_in_use_bytes{0};
}  // namespace detail

/// The budget a process starts with: $TENSORACLE_MEMORY_LIMIT where set (as
/// parse_memory_size reads it; the command line sets it for the workers it starts),
/// else half of physical_memory_bytes() (the rest is for the systems under test, the
/// kernels' work arrays and the OS), else no limit.
[[nodiscard]] inline std::uint64_t default_memory_limit() {
    static const std::uint64_t limit = [] {
        if (const char* env = std::getenv("TENSORACLE_MEMORY_LIMIT"); env != nullptr && *env != '\0') {
            return parse_memory_size(env, "$TENSORACLE_MEMORY_LIMIT");
        }
        const std::uint64_t phys = physical_memory_bytes();
        return phys == 0 ? detail::no_memory_limit : phys / 2;
    }();
    return limit;
}

/// The budget now, in bytes.
[[nodiscard]] inline std::uint64_t memory_limit() {
    const std::uint64_t set = detail::memory_limit_set.load(std::memory_order_relaxed);
    return set != 0 ? set : default_memory_limit();
}

/// Sets the budget of this process (bytes; 0: back to default_memory_limit()).
inline void set_memory_limit(std::uint64_t bytes) { detail::memory_limit_set.store(bytes, std::memory_order_relaxed); }

/// Bytes held by the kit's tensors in this process now.
[[nodiscard]] inline std::uint64_t memory_in_use() { return detail::memory_in_use_bytes.load(std::memory_order_relaxed); }

/// A budget for the lifetime of the object (a test, a sandboxed evaluation); the
/// previous one comes back at its end.
class scoped_memory_limit {
public:
    explicit scoped_memory_limit(std::uint64_t bytes) : previous_(detail::memory_limit_set.load()) { set_memory_limit(bytes); }
    scoped_memory_limit(const scoped_memory_limit&) = delete;
    scoped_memory_limit& operator=(const scoped_memory_limit&) = delete;
    ~scoped_memory_limit() { detail::memory_limit_set.store(previous_); }

private:
    std::uint64_t previous_;
};

namespace detail {
[[nodiscard]] inline memory_error over_budget(std::string_view where, std::string_view what, std::uint64_t bytes,
                                             std::uint64_t in_use, std::uint64_t limit) {
    return memory_error(where,
                        std::string(what) + " needs " + memory_size_text(bytes) + " (" + std::to_string(bytes) +
                            " bytes), over the memory budget of " + memory_size_text(limit) + " (" +
                            memory_size_text(in_use) + " of it in use); the budget is set with --memory-limit, "
                            "$TENSORACLE_MEMORY_LIMIT or tensoracle::set_memory_limit",
                        bytes, limit);
}

/// Counts `bytes` as in use, or throws memory_error (nothing counted) where they do
/// not fit in the budget beside what is in use. `what()` names them; it is called only
/// for the message (this runs for every tensor the kit allocates).
template <class What>
inline void reserve_memory(std::uint64_t bytes, std::string_view where, const What& what) {
    const std::uint64_t limit = memory_limit();
    const std::uint64_t before = memory_in_use_bytes.fetch_add(bytes, std::memory_order_relaxed);
    if (bytes > limit || before > limit - bytes) {
        memory_in_use_bytes.fetch_sub(bytes, std::memory_order_relaxed);
        throw over_budget(where, what(), bytes, before, limit);
    }
}
inline void release_memory(std::uint64_t bytes) noexcept { memory_in_use_bytes.fetch_sub(bytes, std::memory_order_relaxed); }
}  // namespace detail

/// Whether `bytes` more fit in the budget beside what is in use now.
[[nodiscard]] inline bool memory_fits(std::uint64_t bytes) {
    const std::uint64_t limit = memory_limit(), in_use = memory_in_use();
    return bytes <= limit && in_use <= limit - bytes;
}

/// Throws memory_error where `bytes` more would not fit in the budget beside what is
/// in use; counts nothing. For a size known before the work that allocates it (a
/// node's outputs from shape inference, a file's declared length).
inline void check_memory(std::uint64_t bytes, std::string_view where, std::string_view what) {
    if (!memory_fits(bytes)) throw detail::over_budget(where, what, bytes, memory_in_use(), memory_limit());
}

}  // namespace tensoracle
