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

/// For each input, the flat offset of the element that feeds each output
/// element (row-major walk with zero strides on broadcast axes).
inline std::vector<std::vector<std::size_t>> broadcast_offsets(const std::vector<shape_type>& in, const shape_type& out) {
    const std::size_t n = element_count(out);
    std::vector<std::vector<std::size_t>> offsets(in.size(), std::vector<std::size_t>(n));
    const std::size_t rank = out.size();
    for (std::size_t j = 0; j < in.size(); ++j) {
        if (in[j] == out) {  // the common case: no broadcasting, no odometer
            for (std::size_t f = 0; f < n; ++f) offsets[j][f] = f;
            continue;
        }
        // Strides of input j aligned to the output's axes (0 where broadcast).
        shape_type st(rank, 0);
        std::size_t stride = 1;
        for (std::size_t k = in[j].size(); k-- > 0;) {
            const std::size_t axis = rank - in[j].size() + k;
            st[axis] = in[j][k] == 1 ? 0 : stride;
            stride *= in[j][k];
        }
        shape_type idx(rank, 0);
        std::size_t off = 0;
        for (std::size_t f = 0; f < n; ++f) {
            offsets[j][f] = off;
            for (std::size_t k = rank; k-- > 0;) {  // increment the multi-index, odometer style
                ++idx[k];
                off += st[k];
                if (idx[k] < out[k]) break;
                off -= st[k] * idx[k];
                idx[k] = 0;
            }
        }
    }
    return offsets;
}

}  // namespace tensoracle::ops::detail
