// tensoracle: the registry-wide AD rule tables for compiled mode, for the one
// file that defines TENSORACLE_IMPLEMENTATION (with the single header). The
// library tensoracle::compiled builds them per op family instead (src/).
#pragma once

#include <vector>

#include "tensoracle/ad/op_rules.hpp"
#include "tensoracle/ops/all_ops.hpp"

namespace tensoracle::ad {
template <>
const std::vector<derivative_rules<double>>& rules_table<double>() {
    return rules_table<double>(ops::all_ops);
}
template <>
const std::vector<derivative_rules<float>>& rules_table<float>() {
    return rules_table<float>(ops::all_ops);
}
template <>
const std::vector<derivative_rules<dual<double>>>& rules_table<dual<double>>() {
    return rules_table<dual<double>>(ops::all_ops);
}
template <>
const std::vector<derivative_rules<dual<float>>>& rules_table<dual<float>>() {
    return rules_table<dual<float>>(ops::all_ops);
}
}  // namespace tensoracle::ad
