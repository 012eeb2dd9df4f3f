// tensoracle: DepthToSpace (blocks of channels moved into height and width).
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

struct depth_to_space_attr {
    std::int64_t blocksize = 1;
    std::string mode = "DCR";
    static constexpr std::array<std::string_view, 1> required{"blocksize"};
};

/// DepthToSpace-13(input [N, C, H, W]) -> [N, C / b², H * b, W * b]:
/// DCR: out[n, c, h*b + i, w*b + j] = in[n, (i*b + j) * C/b² + c, h, w];
/// CRD: out[n, c, h*b + i, w*b + j] = in[n, c * b² + i*b + j, h, w].
struct DepthToSpace : spec::dtype_of_input<0> {
    static constexpr std::string_view op_type = "DepthToSpace";
    static constexpr int opset = 13;
    using attributes = depth_to_space_attr;
    static constexpr std::array<spec::value_spec, 1> inputs{{{"input", spec::types::all, {4, 4}}}};
    static constexpr std::array<spec::value_spec, 1> outputs{{{"output", spec::types::all, {4, 4}}}};

    template <int = 0>
    static std::vector<spec::constraint> constraints(const spec::context& c) {
        const auto mode = spec::parse_attributes<attributes>(c.attributes(), op_type).mode;
        const auto b = c.attr("blocksize");
        return {shape_util::concrete_fact(mode == "DCR" || mode == "CRD", "mode is DCR or CRD (got '" + mode + "')"),
                {b >= 1, "blocksize >= 1"},
                {c.dim(0, 1) % shape_util::emax(b * b, spec::expr(1)) == 0, "channels divide by blocksize²"}};
    }
    template <int = 0>
    static spec::shape_exprs output_shapes(const spec::context& c) {
        const auto b = c.attr("blocksize");
        return {{c.dim(0, 0), c.dim(0, 1) / shape_util::emax(b * b, spec::expr(1)), c.dim(0, 2) * b, c.dim(0, 3) * b}};
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
        static_assert(spec::dtype_accepted<DepthToSpace, T>::value);
        const auto in = shape_util::shape_of(x);
        if (in.size() != 4) throw shape_error(op_type, "input must have rank 4, got " + std::to_string(in.size()));
        if (a.mode != "DCR" && a.mode != "CRD") throw error(op_type, "mode must be DCR or CRD, got '" + a.mode + "'");
        if (a.blocksize < 1 || a.blocksize > (std::int64_t{1} << 16)) throw error(op_type, "blocksize must be in [1, 65536], got " + std::to_string(a.blocksize));
        const auto b = static_cast<std::size_t>(a.blocksize);
        if (in[1] % (b * b) != 0) throw shape_error(op_type, "channels " + std::to_string(in[1]) + " do not divide by blocksize² = " + std::to_string(b * b));
        const std::size_t oc = in[1] / (b * b);
        const shape_type out{in[0], oc, in[2] * b, in[3] * b};
        const auto st = detail::strides_of(in);
        const bool dcr = a.mode == "DCR";
        return shape_util::gather_elements_by(x, out, op_type, [&](const shape_type& o) {
            const std::size_t i = o[2] % b, j = o[3] % b;
            const std::size_t ch = dcr ? (i * b + j) * oc + o[1] : o[1] * b * b + i * b + j;
            return o[0] * st[0] + ch * st[1] + (o[2] / b) * st[2] + (o[3] / b) * st[3];
        });
    }
    template <class T>
    static array<T> run_typed(const spec::context& c, const array<T>& x) {
        return compute<T>(x, spec::parse_attributes<attributes>(c.attributes(), op_type));
    }
    template <int = 0>
    static std::vector<tensor> run(const spec::context& c) { return shape_detail::run_data<DepthToSpace>(c); }
    template <class S>
    static std::vector<array<S>> run_real(const spec::context& c, const std::vector<array<S>>& x) {
        return shape_detail::run_real_data<DepthToSpace>(c, x);
    }
    template <int = 0>
    static spec::hints hints() { return spec::hints{}.copies(0).choice("mode", {std::string("DCR"), std::string("CRD")}, 0.6).solve("blocksize", 1, 4, 1.0); }
};

}  // namespace tensoracle::ops

TENSORACLE_ADAPT_ATTRIBUTES(tensoracle::ops::depth_to_space_attr, blocksize, mode);
