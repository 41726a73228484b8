// Creates NN ops by type for the tests, mirroring their src/ops/ops.inc lines
// (same names and opset ranges), so the suite does not depend on other ops.
#include <string>
#include <tuple>
#include <vector>

#include "ops/op.h"

namespace glassbox::ops {
Result<std::unique_ptr<Op>> create_AveragePool(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_BatchNormalization(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Concat(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Constant(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_ConstantOfShape(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Conv(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_ConvTranspose(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_DepthToSpace(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Dropout(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Expand(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Flatten(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Gather(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_GatherElements(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_GatherND(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_GlobalAveragePool(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_GlobalMaxPool(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Identity(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_InstanceNormalization(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_LayerNormalization(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_LpNormalization(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_LRN(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_MaxPool(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_NonZero(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_OneHot(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Pad(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Range(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Reshape(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Resize(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_ScatterElements(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_ScatterND(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Scatter(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Shape(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Size(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Slice(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_SpaceToDepth(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Split(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Squeeze(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Tile(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Transpose(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Unsqueeze(const graph::Node& node, int64_t opset);
Result<std::unique_ptr<Op>> create_Upsample(const graph::Node& node, int64_t opset);

namespace {
struct Entry {
  const char* name;
  int64_t first, last;
  OpFactory f;
};
const Entry kEntries[] = {
      {"AveragePool", 1, 17, &create_AveragePool},
      {"BatchNormalization", 1, 17, &create_BatchNormalization},
      {"Concat", 1, 17, &create_Concat},
      {"Constant", 1, 17, &create_Constant},
      {"ConstantOfShape", 9, 17, &create_ConstantOfShape},
      {"Conv", 1, 17, &create_Conv},
      {"ConvTranspose", 1, 17, &create_ConvTranspose},
      {"DepthToSpace", 1, 17, &create_DepthToSpace},
      {"Dropout", 1, 17, &create_Dropout},
      {"Expand", 8, 17, &create_Expand},
      {"Flatten", 1, 17, &create_Flatten},
      {"Gather", 1, 17, &create_Gather},
      {"GatherElements", 11, 17, &create_GatherElements},
      {"GatherND", 11, 17, &create_GatherND},
      {"GlobalAveragePool", 1, 17, &create_GlobalAveragePool},
      {"GlobalMaxPool", 1, 17, &create_GlobalMaxPool},
      {"Identity", 1, 17, &create_Identity},
      {"InstanceNormalization", 1, 17, &create_InstanceNormalization},
      {"LRN", 1, 17, &create_LRN},
      {"LayerNormalization", 17, 17, &create_LayerNormalization},
      {"LpNormalization", 1, 17, &create_LpNormalization},
      {"MaxPool", 1, 17, &create_MaxPool},
      {"NonZero", 9, 17, &create_NonZero},
      {"OneHot", 9, 17, &create_OneHot},
      {"Pad", 2, 17, &create_Pad},
      {"Range", 11, 17, &create_Range},
      {"Reshape", 5, 17, &create_Reshape},
      {"Resize", 10, 17, &create_Resize},
      {"ScatterElements", 11, 17, &create_ScatterElements},
      {"ScatterND", 11, 17, &create_ScatterND},
      {"Scatter", 9, 10, &create_Scatter},
      {"Shape", 1, 17, &create_Shape},
      {"Size", 1, 17, &create_Size},
      {"Slice", 1, 17, &create_Slice},
      {"SpaceToDepth", 1, 17, &create_SpaceToDepth},
      {"Split", 1, 17, &create_Split},
      {"Squeeze", 1, 17, &create_Squeeze},
      {"Tile", 6, 17, &create_Tile},
      {"Transpose", 1, 17, &create_Transpose},
      {"Unsqueeze", 1, 17, &create_Unsqueeze},
      {"Upsample", 7, 9, &create_Upsample},
};
}  // namespace

std::vector<std::tuple<std::string, int64_t, int64_t>> nn_test_registry_entries() {
  std::vector<std::tuple<std::string, int64_t, int64_t>> v;
  for (const auto& e : kEntries) v.emplace_back(e.name, e.first, e.last);
  return v;
}

Result<std::unique_ptr<Op>> create_nn_op_for_test(const graph::Node& node, int64_t opset) {
  for (const auto& e : kEntries)
    if (node.op_type == e.name) {
      if (opset < e.first || opset > e.last)
        return make_error(ErrorCode::kUnsupported, node.op_type + " is not supported at opset " + std::to_string(opset));
      return e.f(node, opset);
    }
  return make_error(ErrorCode::kUnsupported, "no NN op " + node.op_type);
}

}  // namespace glassbox::ops
