// Every op in the registry has a type named exactly as its ONNX op_type.
// Regenerate the list when adding an op (the registry test counts them).
#include <doctest/doctest.h>

#include <tensoracle/ops/all_ops.hpp>
#include <tensoracle/ops/registry.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace ops_names_test {

namespace ops = tensoracle::ops;

static_assert(ops::Abs::op_type == "Abs");
static_assert(ops::Acos::op_type == "Acos");
static_assert(ops::Acosh::op_type == "Acosh");
static_assert(ops::Add::op_type == "Add");
static_assert(ops::And::op_type == "And");
static_assert(ops::ArgMax::op_type == "ArgMax");
static_assert(ops::ArgMin::op_type == "ArgMin");
static_assert(ops::Asin::op_type == "Asin");
static_assert(ops::Asinh::op_type == "Asinh");
static_assert(ops::Atan::op_type == "Atan");
static_assert(ops::Atanh::op_type == "Atanh");
static_assert(ops::AveragePool::op_type == "AveragePool");
static_assert(ops::BatchNormalization::op_type == "BatchNormalization");
static_assert(ops::Cast::op_type == "Cast");
static_assert(ops::CastLike::op_type == "CastLike");
static_assert(ops::Ceil::op_type == "Ceil");
static_assert(ops::Celu::op_type == "Celu");
static_assert(ops::Clip::op_type == "Clip");
static_assert(ops::Concat::op_type == "Concat");
static_assert(ops::Constant::op_type == "Constant");
static_assert(ops::ConstantOfShape::op_type == "ConstantOfShape");
static_assert(ops::Conv::op_type == "Conv");
static_assert(ops::ConvTranspose::op_type == "ConvTranspose");
static_assert(ops::Cos::op_type == "Cos");
static_assert(ops::Cosh::op_type == "Cosh");
static_assert(ops::CumSum::op_type == "CumSum");
static_assert(ops::DepthToSpace::op_type == "DepthToSpace");
static_assert(ops::Div::op_type == "Div");
static_assert(ops::Dropout::op_type == "Dropout");
static_assert(ops::Elu::op_type == "Elu");
static_assert(ops::Equal::op_type == "Equal");
static_assert(ops::Erf::op_type == "Erf");
static_assert(ops::Exp::op_type == "Exp");
static_assert(ops::Expand::op_type == "Expand");
static_assert(ops::EyeLike::op_type == "EyeLike");
static_assert(ops::Flatten::op_type == "Flatten");
static_assert(ops::Floor::op_type == "Floor");
static_assert(ops::Gather::op_type == "Gather");
static_assert(ops::GatherElements::op_type == "GatherElements");
static_assert(ops::Gemm::op_type == "Gemm");
static_assert(ops::GlobalAveragePool::op_type == "GlobalAveragePool");
static_assert(ops::GlobalMaxPool::op_type == "GlobalMaxPool");
static_assert(ops::Greater::op_type == "Greater");
static_assert(ops::GreaterOrEqual::op_type == "GreaterOrEqual");
static_assert(ops::HardSigmoid::op_type == "HardSigmoid");
static_assert(ops::HardSwish::op_type == "HardSwish");
static_assert(ops::Hardmax::op_type == "Hardmax");
static_assert(ops::Identity::op_type == "Identity");
static_assert(ops::InstanceNormalization::op_type == "InstanceNormalization");
static_assert(ops::IsInf::op_type == "IsInf");
static_assert(ops::IsNaN::op_type == "IsNaN");
static_assert(ops::LRN::op_type == "LRN");
static_assert(ops::LayerNormalization::op_type == "LayerNormalization");
static_assert(ops::LeakyRelu::op_type == "LeakyRelu");
static_assert(ops::Less::op_type == "Less");
static_assert(ops::LessOrEqual::op_type == "LessOrEqual");
static_assert(ops::Log::op_type == "Log");
static_assert(ops::LogSoftmax::op_type == "LogSoftmax");
static_assert(ops::LpNormalization::op_type == "LpNormalization");
static_assert(ops::MatMul::op_type == "MatMul");
static_assert(ops::Max::op_type == "Max");
static_assert(ops::MaxPool::op_type == "MaxPool");
static_assert(ops::Mean::op_type == "Mean");
static_assert(ops::Min::op_type == "Min");
static_assert(ops::Mod::op_type == "Mod");
static_assert(ops::Mul::op_type == "Mul");
static_assert(ops::Neg::op_type == "Neg");
static_assert(ops::Not::op_type == "Not");
static_assert(ops::OneHot::op_type == "OneHot");
static_assert(ops::Or::op_type == "Or");
static_assert(ops::PRelu::op_type == "PRelu");
static_assert(ops::Pad::op_type == "Pad");
static_assert(ops::Pow::op_type == "Pow");
static_assert(ops::Range::op_type == "Range");
static_assert(ops::Reciprocal::op_type == "Reciprocal");
static_assert(ops::ReduceL1::op_type == "ReduceL1");
static_assert(ops::ReduceL2::op_type == "ReduceL2");
static_assert(ops::ReduceLogSum::op_type == "ReduceLogSum");
static_assert(ops::ReduceLogSumExp::op_type == "ReduceLogSumExp");
static_assert(ops::ReduceMax::op_type == "ReduceMax");
static_assert(ops::ReduceMean::op_type == "ReduceMean");
static_assert(ops::ReduceMin::op_type == "ReduceMin");
static_assert(ops::ReduceProd::op_type == "ReduceProd");
static_assert(ops::ReduceSum::op_type == "ReduceSum");
static_assert(ops::ReduceSumSquare::op_type == "ReduceSumSquare");
static_assert(ops::Relu::op_type == "Relu");
static_assert(ops::Reshape::op_type == "Reshape");
static_assert(ops::Resize::op_type == "Resize");
static_assert(ops::Round::op_type == "Round");
static_assert(ops::Selu::op_type == "Selu");
static_assert(ops::Shape::op_type == "Shape");
static_assert(ops::Shrink::op_type == "Shrink");
static_assert(ops::Sigmoid::op_type == "Sigmoid");
static_assert(ops::Sign::op_type == "Sign");
static_assert(ops::Sin::op_type == "Sin");
static_assert(ops::Sinh::op_type == "Sinh");
static_assert(ops::Size::op_type == "Size");
static_assert(ops::Slice::op_type == "Slice");
static_assert(ops::Softmax::op_type == "Softmax");
static_assert(ops::Softplus::op_type == "Softplus");
static_assert(ops::Softsign::op_type == "Softsign");
static_assert(ops::SpaceToDepth::op_type == "SpaceToDepth");
static_assert(ops::Split::op_type == "Split");
static_assert(ops::Sqrt::op_type == "Sqrt");
static_assert(ops::Squeeze::op_type == "Squeeze");
static_assert(ops::Sub::op_type == "Sub");
static_assert(ops::Sum::op_type == "Sum");
static_assert(ops::Tan::op_type == "Tan");
static_assert(ops::Tanh::op_type == "Tanh");
static_assert(ops::ThresholdedRelu::op_type == "ThresholdedRelu");
static_assert(ops::Tile::op_type == "Tile");
static_assert(ops::TopK::op_type == "TopK");
static_assert(ops::Transpose::op_type == "Transpose");
static_assert(ops::Trilu::op_type == "Trilu");
static_assert(ops::Unsqueeze::op_type == "Unsqueeze");
static_assert(ops::Upsample::op_type == "Upsample");
static_assert(ops::Where::op_type == "Where");
static_assert(ops::Xor::op_type == "Xor");

TEST_CASE("registry: every op has a type named as its ONNX op_type") {
    CHECK(ops::registry().size() == 118);
}

}  // namespace ops_names_test
