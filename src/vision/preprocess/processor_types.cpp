#include "vision/preprocess/processor_types.h"

namespace glassbox::vision::detail {
namespace {

using K = SizeSpec::Kind;
constexpr float kStd05[3] = {0.5f, 0.5f, 0.5f};  // IMAGENET_STANDARD_MEAN / _STD
#define IMAGENET_DEFAULT {0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}
#define IMAGENET_STANDARD {kStd05[0], kStd05[1], kStd05[2]}, {kStd05[0], kStd05[1], kStd05[2]}
#define OPENAI_CLIP {0.48145466f, 0.4578275f, 0.40821073f}, {0.26862954f, 0.26130258f, 0.27577711f}

const ProcessorDefaults kTypes[] = {
    // ViT: 224x224 bilinear, mean/std 0.5, no crop.
    {"ViTImageProcessor", {K::kHeightWidth, 224, 224, 0}, true, Resample::kBilinear, false, 0, IMAGENET_STANDARD, {}},
    {"ViTFeatureExtractor", {K::kHeightWidth, 224, 224, 0}, true, Resample::kBilinear, false, 0, IMAGENET_STANDARD, {}},
    // DeiT: 256x256 bicubic, crop 224, mean/std 0.5.
    {"DeiTImageProcessor", {K::kHeightWidth, 256, 256, 0}, true, Resample::kBicubic, true, 224, IMAGENET_STANDARD, {}},
    {"DeiTFeatureExtractor", {K::kHeightWidth, 256, 256, 0}, true, Resample::kBicubic, true, 224, IMAGENET_STANDARD, {}},
    // CLIP: shortest edge 224 bicubic, crop 224, CLIP mean/std.
    {"CLIPImageProcessor", {K::kShortestEdge, 0, 0, 224}, false, Resample::kBicubic, true, 224, OPENAI_CLIP, {}},
    {"CLIPFeatureExtractor", {K::kShortestEdge, 0, 0, 224}, false, Resample::kBicubic, true, 224, OPENAI_CLIP, {}},
    // BiT (ResNet-style BiT/DINOv2 checkpoints): as CLIP.
    {"BitImageProcessor", {K::kShortestEdge, 0, 0, 224}, false, Resample::kBicubic, true, 224, OPENAI_CLIP, {}},
    // SigLIP: 224x224 bicubic squash, no crop, mean/std 0.5.
    {"SiglipImageProcessor", {K::kHeightWidth, 224, 224, 0}, true, Resample::kBicubic, false, 0, IMAGENET_STANDARD, {}},
    // ConvNeXt (also microsoft/resnet-*): shortest edge 384, crop_pct 224/256, bilinear.
    {"ConvNextImageProcessor", {K::kShortestEdge, 0, 0, 384}, false, Resample::kBilinear, false, 0, IMAGENET_DEFAULT,
     224.0 / 256.0},
    {"ConvNextFeatureExtractor", {K::kShortestEdge, 0, 0, 384}, false, Resample::kBilinear, false, 0, IMAGENET_DEFAULT,
     224.0 / 256.0},
};

}  // namespace

const ProcessorDefaults* find_processor_defaults(const std::string& type) {
  for (const auto& t : kTypes)
    if (type == t.name) return &t;
  return nullptr;
}

std::string known_processor_types() {
  std::string s;
  for (const auto& t : kTypes) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

}  // namespace glassbox::vision::detail
