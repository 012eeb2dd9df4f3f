// expect: no_backend_entry_for<.*"Abs"
// A backend table keyed by op spec type (as cuda/lowering.hpp and the torch
// backend's) that has no entry for one op of the list it must cover: the
// diagnostic names that op's op_type.
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

#include <tensoracle/ops/keyed.hpp>
#include <tensoracle/ops/unary.hpp>

namespace hana = boost::hana;
namespace ops = tensoracle::ops;

inline auto lowerings() { return hana::make_tuple(ops::keyed<ops::Relu, int>{1}); }
inline constexpr auto unsupported = hana::tuple_t<ops::Neg>;

#ifdef TENSORACLE_COMPILE_FAIL_CONTROL
static_assert(ops::each_op_once<decltype(hana::tuple_t<ops::Relu, ops::Neg>), decltype(lowerings()), decltype(unsupported)>);
#else
static_assert(ops::each_op_once<decltype(hana::tuple_t<ops::Relu, ops::Abs, ops::Neg>), decltype(lowerings()),
                                decltype(unsupported)>);  // Abs has no entry
#endif

int main() { return 0; }
