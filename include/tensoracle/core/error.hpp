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

/// A valid input the kit does not support (an op variant, a dtype, a mode):
/// conformance reports these as skipped rather than failed.
class unsupported_error : public error {
public:
    using error::error;
};

}  // namespace tensoracle
