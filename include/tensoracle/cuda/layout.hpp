// tensoracle: index arithmetic of the CUDA kernels, host-testable. A kernel
// walks an iteration shape in row-major order and reads each operand through
// a strided_map: dims of the iteration space and the operand's element
// strides (0 where it broadcasts, negative for reversed slices). Built on the
// host, passed to kernels by value; no CUDA needed to compile or test it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/core/error.hpp"
#include "tensoracle/ops/formulas.hpp"

namespace tensoracle::cuda {

/// The highest rank a CUDA kernel indexes (ONNX models rarely exceed 6).
inline constexpr int max_rank = 8;

/// Iteration dims and one operand's strides, in elements.
struct strided_map {
    int rank = 0;
    std::int64_t dims[max_rank] = {};
    std::int64_t strides[max_rank] = {};
    std::int64_t offset = 0;  ///< elements from the buffer's start
    /// The iteration space has fewer than 2^31 elements: index arithmetic in
    /// 32 bits with division by multiplication (a GPU divides 64-bit integers
    /// in software, 32-bit ones in about 20 instructions). Set by narrowed().
    bool narrow = false;
    std::uint32_t div_mul[max_rank] = {};    ///< per axis: q = hi32(n * div_mul) >> div_shift ...
    std::uint32_t div_shift[max_rank] = {};  ///< ... for n < 2^31 (div_mul 0: dims 1, q = n)

    /// n / dims[d] for n < 2^31, by the multiplier narrowed() chose (round-up method).
    TENSORACLE_HD std::uint32_t divide(std::uint32_t n, int d) const {
        if (div_mul[d] == 0) return n;
#if defined(__CUDA_ARCH__)
        return __umulhi(n, div_mul[d]) >> div_shift[d];
#else
        return static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * div_mul[d]) >> 32) >> div_shift[d];
#endif
    }

    /// The operand's element offset of the row-major position `flat` of the iteration space.
    TENSORACLE_HD std::int64_t at(std::int64_t flat) const {
        if (rank == 1) return offset + flat * strides[0];
        std::int64_t off = offset;
        if (narrow) {
            auto f = static_cast<std::uint32_t>(flat);
            for (int d = rank - 1; d >= 0; --d) {
                const std::uint32_t q = divide(f, d);
                off += static_cast<std::int64_t>(f - q * static_cast<std::uint32_t>(dims[d])) * strides[d];
                f = q;
            }
            return off;
        }
        for (int d = rank - 1; d >= 0; --d) {
            const std::int64_t i = flat % dims[d];
            flat /= dims[d];
            off += i * strides[d];
        }
        return off;
    }
    /// This map with `narrow` set (and the divisors prepared) where its iteration space allows.
    [[nodiscard]] strided_map narrowed() const {
        strided_map m = *this;
        std::uint64_t n = 1;
        bool fits = true;
        for (int d = 0; d < rank; ++d) {
            if (dims[d] < 0 || static_cast<std::uint64_t>(dims[d]) >= (std::uint64_t{1} << 31)) {
                fits = false;
                break;
            }
            n *= static_cast<std::uint64_t>(dims[d]);
            if (n >= (std::uint64_t{1} << 31)) fits = false;
        }
        m.narrow = fits;
        for (int d = 0; d < rank && fits; ++d) {
            const auto v = static_cast<std::uint64_t>(dims[d]);
            if (v <= 1) {
                m.div_mul[d] = 0;
                m.div_shift[d] = 0;
                continue;
            }
            unsigned ceil_log2 = 0;
            while ((std::uint64_t{1} << ceil_log2) < v) ++ceil_log2;
            const unsigned p = 31 + ceil_log2;
            m.div_mul[d] = static_cast<std::uint32_t>(((std::uint64_t{1} << p) + v - 1) / v);
            m.div_shift[d] = p - 32;
        }
        return m;
    }
};

/// Merges adjacent axes of maps over one iteration space wherever every map
/// steps through them as through one axis (stride[k] == stride[k+1] * dims[k+1]),
/// and drops axes of length 1: fewer axes, less index arithmetic per element.
/// Every map must have the same rank and dims.
inline void collapse(std::span<strided_map* const> maps) {
    if (maps.empty()) return;
    strided_map& first = *maps.front();
    int out = 0;
    for (int k = 0; k < first.rank; ++k) {
        if (first.dims[k] == 1 && first.rank > 1) continue;  // a unit axis moves nothing
        bool merge = out > 0;
        for (const auto* m : maps) {
            merge = merge && m->strides[out - 1] == m->strides[k] * m->dims[k];
        }
        for (auto* m : maps) {
            if (merge) {
                m->dims[out - 1] *= m->dims[k];
                m->strides[out - 1] = m->strides[k];
            } else {
                m->dims[out] = m->dims[k];
                m->strides[out] = m->strides[k];
            }
        }
        if (!merge) ++out;
    }
    if (out == 0 && first.rank > 0) {  // every axis had length 1: one axis of one element
        for (auto* m : maps) {
            m->dims[0] = 1;
            m->strides[0] = 0;
        }
        out = 1;
    }
    for (auto* m : maps) {
        m->rank = out;
        *m = m->narrowed();
    }
}
/// collapse(a, b, ...) for maps at hand (no allocation).
template <class... Maps>
void collapse(strided_map& first, Maps&... rest) {
    const std::array<strided_map*, 1 + sizeof...(Maps)> maps{&first, &rest...};
    collapse(std::span<strided_map* const>(maps));
}

/// Row-major strides of a shape, in elements.
inline std::vector<std::int64_t> contiguous_strides(const std::vector<std::size_t>& shape) {
    std::vector<std::int64_t> s(shape.size());
    std::int64_t acc = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        s[i] = acc;
        acc *= static_cast<std::int64_t>(shape[i]);
    }
    return s;
}

/// ONNX (numpy) multidirectional broadcasting of shapes; throws shape_error naming `where`.
inline std::vector<std::size_t> broadcast_shape(const std::vector<std::vector<std::size_t>>& shapes,
                                                std::string_view where) {
    std::size_t rank = 0;
    for (const auto& s : shapes) rank = s.size() > rank ? s.size() : rank;
    std::vector<std::size_t> out(rank, 1);
    for (const auto& s : shapes) {
        for (std::size_t k = 0; k < s.size(); ++k) {
            std::size_t& o = out[rank - s.size() + k];
            const std::size_t d = s[k];
            if (d == o || d == 1) continue;
            if (o != 1) {
                throw shape_error(where, "shapes do not broadcast: dimension " + std::to_string(d) + " against " +
                                             std::to_string(o) + " at axis " + std::to_string(rank - s.size() + k));
            }
            o = d;
        }
    }
    return out;
}

/// The map that reads an operand of `shape` and `strides` (elements) at the
/// positions of the iteration space `out` it broadcasts to (right-aligned).
inline strided_map broadcast_map(const std::vector<std::size_t>& out, const std::vector<std::size_t>& shape,
                                 const std::vector<std::int64_t>& strides, std::int64_t offset,
                                 std::string_view where) {
    if (out.size() > static_cast<std::size_t>(max_rank)) {
        throw unsupported_error(where, "rank " + std::to_string(out.size()) + " exceeds the CUDA kernels' limit of " +
                                           std::to_string(max_rank));
    }
    if (shape.size() > out.size() || strides.size() != shape.size()) {
        throw shape_error(where, "operand of rank " + std::to_string(shape.size()) + " does not broadcast to rank " +
                                     std::to_string(out.size()));
    }
    strided_map m;
    m.rank = static_cast<int>(out.size());
    m.offset = offset;
    const std::size_t lead = out.size() - shape.size();
    for (std::size_t k = 0; k < out.size(); ++k) {
        m.dims[k] = static_cast<std::int64_t>(out[k]);
        if (k < lead) {
            m.strides[k] = 0;
            continue;
        }
        const std::size_t d = shape[k - lead];
        if (d != out[k] && d != 1) {
            throw shape_error(where, "dimension " + std::to_string(d) + " does not broadcast to " +
                                         std::to_string(out[k]) + " at axis " + std::to_string(k));
        }
        m.strides[k] = d == 1 ? 0 : strides[k - lead];
    }
    return m.narrowed();
}

/// A reduction split into kept (output) and reduced axes: output o reads the
/// elements kept.at(o) + reduced.at(r) for r in [0, count).
struct reduction_plan {
    strided_map kept;     ///< over the output positions (kept axes)
    strided_map reduced;  ///< over the reduced positions, offset 0
    std::int64_t outputs = 1;
    std::int64_t count = 1;  ///< elements per output
    std::vector<std::size_t> out_shape;  ///< with keepdims applied
};

/// Plans a reduction of `shape` (strides in elements) over `axes` (negative
/// counts from the end; empty = all axes unless noop_with_empty_axes).
inline reduction_plan plan_reduction(const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& strides,
                                     std::int64_t offset, std::vector<std::int64_t> axes, bool keepdims,
                                     bool noop_with_empty_axes, std::string_view where) {
    const auto rank = static_cast<std::int64_t>(shape.size());
    if (rank > max_rank) {
        throw unsupported_error(where, "rank " + std::to_string(rank) + " exceeds the CUDA kernels' limit of " +
                                           std::to_string(max_rank));
    }
    std::vector<bool> reduce(shape.size(), false);
    if (axes.empty() && !noop_with_empty_axes) {
        reduce.assign(shape.size(), true);
    }
    for (auto a : axes) {
        const std::int64_t n = a < 0 ? a + rank : a;
        if (n < 0 || n >= rank) {
            throw shape_error(where, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
        }
        if (reduce[static_cast<std::size_t>(n)]) {
            throw shape_error(where, "axis " + std::to_string(a) + " is repeated");
        }
        reduce[static_cast<std::size_t>(n)] = true;
    }
    reduction_plan p;
    p.kept.offset = offset;
    for (std::size_t k = 0; k < shape.size(); ++k) {
        const auto d = static_cast<std::int64_t>(shape[k]);
        if (reduce[k]) {
            p.reduced.dims[p.reduced.rank] = d;
            p.reduced.strides[p.reduced.rank++] = strides[k];
            p.count *= d;
            if (keepdims) p.out_shape.push_back(1);
        } else {
            p.kept.dims[p.kept.rank] = d;
            p.kept.strides[p.kept.rank++] = strides[k];
            p.outputs *= d;
            p.out_shape.push_back(shape[k]);
        }
    }
    if (p.kept.rank > 0) collapse(p.kept);
    if (p.reduced.rank > 0) collapse(p.reduced);
    return p;
}

}  // namespace tensoracle::cuda
