// tensoracle: FNV-1a, the kit's stable content hash (config hashes, failure
// signatures): the same text gives the same 16 hex digits on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tensoracle {

/// The 64-bit FNV-1a hash of `text` (a seed derived from text, for instance).
[[nodiscard]] constexpr std::uint64_t fnv1a(std::string_view text) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char ch : text) {
        h ^= static_cast<unsigned char>(ch);
        h *= 0x100000001b3ULL;
    }
    return h;
}

[[nodiscard]] inline std::string fnv1a_hex(std::string_view text) {
    std::uint64_t h = fnv1a(text);
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = digits[h & 15];
    return out;
}

}  // namespace tensoracle
