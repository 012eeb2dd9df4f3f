// tensoracle: FNV-1a, the kit's stable content hash (config hashes, failure
// signatures): the same text gives the same 16 hex digits on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tensoracle {

[[nodiscard]] inline std::string fnv1a_hex(std::string_view text) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char c : text) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = digits[h & 15];
    return out;
}

}  // namespace tensoracle
