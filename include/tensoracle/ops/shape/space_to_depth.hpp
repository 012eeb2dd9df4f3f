// tensoracle: SpaceToDepth (blocks of height and width moved into channels).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/adapt_struct.hpp>

#include "tensoracle/ops/detail/common.hpp"
#include "tensoracle/ops/detail/shape_util.hpp"
#include "tensoracle/ops/shape/detail/helpers.hpp"
#include "tensoracle/spec/entry.hpp"

namespace tensoracle::ops {

struct space_to_depth_attr {
    std::int64_t blocksize = 1;
    static constexpr std::array<std::string_view, 1> required{"blocksize"};
};

/// SpaceToDepth-13(input [N, C, H, W]) -> [N, C * b², H / b, W / b]:
/// out[n, (i*b + j) * C + c, h, w] = in[n, c, h*b + i, w*b + j].
struct SpaceToDepth : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "SpaceToDepth";
    static constexpr int opset = 13;
    using attributes = space_to_depth_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {4, 4}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {4, 4}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto b = c.attr("blocksize");
        return {{b >= 1, "blocksize >= 1"},
                {c.dim(0, 2) % shape_util::emax(b, spec::expr(1)) == 0, "height divides by blocksize"},
                {c.dim(0, 3) % shape_util::emax(b, spec::expr(1)) == 0, "width divides by blocksize"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto b = c.attr("blocksize");
        const auto bb = shape_util::emax(b, spec::expr(1));
        return {{c.dim(0, 0), c.dim(0, 1) * b * b, c.dim(0, 2) / bb, c.dim(0, 3) / bb}};
    }
    template <int = 0>
    static std::vector<spec::input_candidate> input_candidates(dtype out, std::size_t rank) {
        if (!spec::types::all.contains(out) || rank != 4) return {};
        return {{{out}, {4}}};
    }
    template <int = 0>
    static std::vector<spec::domain_rule> domain(const spec::attribute_map&) { return {}; }

    template <class T>
    static array<T> compute(const array<T>& x, const attributes& a) {
        static_assert(spec::dtype_accepted<SpaceToDepth, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() != 4) throw shape_error(op_type, "input must have rank 4, got " + std::to_string(in.size()));
        if (a.blocksize < 1 || a.blocksize > (std::int64_t{1} << 16)) throw error(op_type, "blocksize must be in [1, 65536], got " + std::to_string(a.blocksize));
        const auto b = static_cast<std::size_t>(a.blocksize);
        if (in[2] % b != 0 || in[3] % b != 0) {
            throw shape_error(op_type, "height and width " + std::to_string(in[2]) + ", " + std::to_string(in[3]) + " do not divide by blocksize " + std::to_string(b));
        }
        const std::size_t ch = in[1];
        const shape_type out{in[0], ch * b * b, in[2] / b, in[3] / b};
        const auto st = detail::strides_of(in);
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            const std::size_t c = o[1] % ch, blk = o[1] / ch, i = blk / b, j = blk % b;
            return o[0] * st[0] + c * st[1] + (o[2] * b + i) * st[2] + (o[3] * b + j) * st[3];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<SpaceToDepth>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<SpaceToDepth>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0).solve("blocksize", 1, 4, 1.0); }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::space_to_depth_attr, blocksize);
