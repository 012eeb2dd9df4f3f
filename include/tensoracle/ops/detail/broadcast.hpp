// tensoracle: ONNX multidirectional broadcasting, symbolic and concrete.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "tensoracle/core/tensor.hpp"
#include "tensoracle/spec/op.hpp"

namespace tensoracle::ops::detail {

/// Constraints that inputs `ids` broadcast together (right-aligned dims are
/// equal or 1).
inline std::vector<spec::constraint> broadcast_constraints(const spec::context& c, const std::vector<std::size_t>& ids) {
    std::vector<spec::constraint> out;
    std::size_t rank = 0;
    for (const auto i : ids) rank = std::max(rank, c.rank(i));
    for (std::size_t k = 0; k < rank; ++k) {
        std::vector<spec::expr> dims;
        for (const auto i : ids) {
            if (c.rank(i) + k >= rank) dims.push_back(c.dim(i, c.rank(i) + k - rank));
        }
        for (std::size_t a = 0; a < dims.size(); ++a) {
            for (std::size_t b = a + 1; b < dims.size(); ++b) {
                out.push_back({dims[a] == dims[b] || dims[a] == 1 || dims[b] == 1,
                               "broadcastable dims at output axis " + std::to_string(k)});
            }
        }
    }
    return out;
}

/// The broadcast output shape of inputs `ids`: 1 gives way to any other dim.
inline std::vector<spec::expr> broadcast_shape(const spec::context& c, const std::vector<std::size_t>& ids) {
    std::size_t rank = 0;
    for (const auto i : ids) rank = std::max(rank, c.rank(i));
    std::vector<spec::expr> out;
    for (std::size_t k = 0; k < rank; ++k) {
        std::optional<spec::expr> d;
        for (const auto i : ids) {
            if (c.rank(i) + k < rank) continue;
            const auto e = c.dim(i, c.rank(i) + k - rank);
            d = d ? select(*d == 1, e, *d) : e;
        }
        out.push_back(*d);
    }
    return out;
}

/// Concrete broadcast of shapes; throws shape_error naming the axis.
inline shape_type broadcast_shapes(const std::vector<shape_type>& shapes, std::string_view where) {
    std::size_t rank = 0;
    for (const auto& s : shapes) rank = std::max(rank, s.size());
    shape_type out(rank, 1);
    for (std::size_t k = 0; k < rank; ++k) {
        bool set = false;
        for (const auto& s : shapes) {
            if (s.size() + k < rank) continue;
            const std::size_t d = s[s.size() + k - rank];
            if (!set || out[k] == 1) {
                out[k] = d;
                set = true;
            } else if (d != 1 && d != out[k]) {
                throw shape_error(where, "shapes " + to_string(shapes.front()) + " and " + to_string(s) +
                                             " do not broadcast at output axis " + std::to_string(k));
            }
        }
    }
    return out;
}

/// Walks a broadcast output in runs along its innermost axis, after merging
/// every pair of neighbouring axes that all inputs step through alike (so a
/// broadcast without broadcasting is one run). visit(f, len, base, step): output
/// elements f .. f+len-1 read element base[j] + i * step[j] of input j (step 0
/// where input j is broadcast along the run). Kernels loop over a run with
/// plain pointer arithmetic instead of a multi-index per element.
template <class Visit>
void for_each_broadcast_run(const std::vector<shape_type>& in, const shape_type& out, Visit&& visit) {
    const std::size_t m = in.size();
    if (element_count(out) == 0) return;
    // Merged axes, outer to inner: length and each input's stride along it.
    std::vector<std::size_t> len;
    std::vector<std::vector<std::size_t>> st;  // st[axis][j]
    std::vector<std::size_t> stride(m, 1);
    std::vector<std::size_t> cur(m);
    for (std::size_t k = out.size(); k-- > 0;) {
        if (out[k] == 1) continue;
        for (std::size_t j = 0; j < m; ++j) {
            const std::size_t rj = in[j].size();
            const bool has = rj + k >= out.size();
            const std::size_t d = has ? in[j][rj + k - out.size()] : 1;
            cur[j] = d == 1 ? 0 : stride[j];
        }
        bool merge = !len.empty();
        for (std::size_t j = 0; merge && j < m; ++j) merge = cur[j] == st.back()[j] * len.back();
        if (merge) {
            len.back() *= out[k];
        } else {
            len.push_back(out[k]);
            st.push_back(cur);
        }
        for (std::size_t j = 0; j < m; ++j) {
            const std::size_t rj = in[j].size();
            if (rj + k >= out.size()) stride[j] *= in[j][rj + k - out.size()];
        }
    }
    if (len.empty()) {  // every dim is 1: one element
        len.push_back(1);
        st.emplace_back(m, 0);
    }
    // Innermost first in `len`; the run is axis 0, the odometer the rest.
    const std::size_t run = len[0], axes = len.size();
    std::vector<std::size_t> idx(axes, 0), base(m, 0);
    const std::size_t n = element_count(out);
    for (std::size_t f = 0; f < n; f += run) {
        visit(f, run, std::span<const std::size_t>(base), std::span<const std::size_t>(st[0]));
        for (std::size_t a = 1; a < axes; ++a) {
            for (std::size_t j = 0; j < m; ++j) base[j] += st[a][j];
            if (++idx[a] < len[a]) break;
            for (std::size_t j = 0; j < m; ++j) base[j] -= st[a][j] * len[a];
            idx[a] = 0;
        }
    }
}

/// For each input, the flat offset of the element that feeds each output
/// element (row-major, broadcast axes repeating).
inline std::vector<std::vector<std::size_t>> broadcast_offsets(const std::vector<shape_type>& in, const shape_type& out) {
    const std::size_t n = element_count(out);
    std::vector<std::vector<std::size_t>> offsets(in.size(), std::vector<std::size_t>(n));
    for_each_broadcast_run(in, out, [&](std::size_t f, std::size_t len, std::span<const std::size_t> base,
                                        std::span<const std::size_t> step) {
        for (std::size_t j = 0; j < in.size(); ++j) {
            for (std::size_t i = 0; i < len; ++i) offsets[j][f + i] = base[j] + i * step[j];
        }
    });
    return offsets;
}

}  // namespace tensoracle::ops::detail
