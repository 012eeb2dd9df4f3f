// tensoracle: errors thrown by the kit.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace tensoracle {

/// Every error the kit throws on bad input. `where()` names the API call or
/// the graph element at fault; `what()` is the full message "where: reason".
class error : public std::runtime_error {
public:
    error(std::string_view where, std::string_view reason)
        : std::runtime_error(std::string(where) + ": " + std::string(reason)),
          where_(where) {}

    [[nodiscard]] const std::string& where() const noexcept { return where_; }

private:
    std::string where_;
};

/// A runtime dtype that the called function does not handle.
class dtype_error : public error {
public:
    using error::error;
};

/// Shapes that do not fit together (element counts, ranks, broadcasting).
class shape_error : public error {
public:
    using error::error;
};

/// A tensor (or a node's outputs) that would not fit in the memory budget
/// (core/memory.hpp), raised before anything is allocated. A campaign labels a
/// case its reference cannot afford `reference_skipped`, not a backend failure.
class memory_error : public error {
public:
    memory_error(std::string_view where, std::string_view reason, unsigned long long bytes_asked,
                 unsigned long long limit)
        : error(where, reason), bytes_asked_(bytes_asked), limit_(limit) {}

    /// What the allocation asked for, and the budget it did not fit in (bytes).
    [[nodiscard]] unsigned long long bytes_asked() const noexcept { return bytes_asked_; }
    [[nodiscard]] unsigned long long limit() const noexcept { return limit_; }

private:
    unsigned long long bytes_asked_;
    unsigned long long limit_;
};

/// A valid input the kit does not support (an op variant, a dtype, a mode):
/// conformance reports these as skipped rather than failed.
class unsupported_error : public error {
public:
    using error::error;
};

namespace detail {
/// Rethrows e at `where`, its message after `prefix`, keeping its kind (memory,
/// unsupported, dtype, shape): the interpreter names the node, the ONNX reader the tensor.
[[noreturn]] inline void rethrow_with_context(const error& e, std::string_view where, std::string_view prefix) {
    const std::string msg = std::string(prefix) + e.what();
    if (const auto* m = dynamic_cast<const memory_error*>(&e)) throw memory_error(where, msg, m->bytes_asked(), m->limit());
    if (dynamic_cast<const unsupported_error*>(&e) != nullptr) throw unsupported_error(where, msg);
    if (dynamic_cast<const dtype_error*>(&e) != nullptr) throw dtype_error(where, msg);
    if (dynamic_cast<const shape_error*>(&e) != nullptr) throw shape_error(where, msg);
    throw error(where, msg);
}
}  // namespace detail

}  // namespace tensoracle
