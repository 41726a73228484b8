// read_preprocess: what a model directory declares, the sources recorded, and the refusals by name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "glassbox/vision.h"

namespace {

using namespace glassbox;
using namespace glassbox::vision;
namespace fs = std::filesystem;

class PreprocessConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gb_vision_cfg_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Result<Preprocess> read(const std::string& preprocessor, const std::string& glassbox = "") {
    std::ofstream(dir_ / "preprocessor_config.json") << preprocessor;
    if (!glassbox.empty()) std::ofstream(dir_ / "glassbox.json") << glassbox;
    return read_preprocess(dir_.string());
  }
  static const Step* step(const Preprocess& p, const std::string& field) {
    for (const auto& s : p.steps)
      if (s.field == field) return &s;
    return nullptr;
  }
  void expect_refused(const std::string& json, const std::string& needle) {
    auto r = read(json);
    ASSERT_FALSE(r.ok()) << json;
    EXPECT_NE(r.error().what.find(needle), std::string::npos) << r.error().to_string();
  }
  fs::path dir_;
};

TEST_F(PreprocessConfig, ClassDefaultsAreRecordedWithTheirRisk) {
  auto p = read(R"({"image_processor_type": "CLIPImageProcessor", "image_mean": [0.1, 0.2, 0.3]})");
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->size.kind, SizeSpec::Kind::kShortestEdge);
  EXPECT_EQ(p->size.edge, 224);
  EXPECT_EQ(p->resample, Resample::kBicubic);
  EXPECT_TRUE(p->do_center_crop);
  const Step* resample = step(*p, "resample");
  ASSERT_NE(resample, nullptr);
  EXPECT_EQ(resample->source, "default of CLIPImageProcessor (transformers)");
  EXPECT_FALSE(resample->risk.empty());
  const Step* mean = step(*p, "image_mean");
  ASSERT_NE(mean, nullptr);
  EXPECT_EQ(mean->source, "preprocessor_config.json image_mean");
  EXPECT_TRUE(mean->risk.empty());
  EXPECT_FLOAT_EQ(p->mean[2], 0.3f);
  EXPECT_FLOAT_EQ(p->std[0], 0.26862954f);  // CLIP's std, the class default
}

TEST_F(PreprocessConfig, GlassboxJsonWinsFieldByField) {
  auto p = read(R"({"image_processor_type": "ViTImageProcessor", "resample": 2, "size": {"height": 224, "width": 224}})",
                R"({"vision": {"resample": 3, "layout": "nhwc"}})");
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->resample, Resample::kBicubic);
  EXPECT_EQ(step(*p, "resample")->source, "glassbox.json vision.resample");
  EXPECT_EQ(step(*p, "size")->source, "preprocessor_config.json size");
  ASSERT_TRUE(p->layout.has_value());
  EXPECT_EQ(*p->layout, Layout::kNhwc);
}

TEST_F(PreprocessConfig, LegacyIntegerSizes) {
  auto clip = read(R"({"feature_extractor_type": "CLIPFeatureExtractor", "size": 256, "crop_size": 224})");
  ASSERT_TRUE(clip.ok()) << clip.error().to_string();
  EXPECT_EQ(clip->size.kind, SizeSpec::Kind::kShortestEdge);  // CLIP: int = shortest edge
  EXPECT_EQ(clip->crop_width, 224);
  auto vit = read(R"({"image_processor_type": "ViTImageProcessor", "size": 384})");
  ASSERT_TRUE(vit.ok());
  EXPECT_EQ(vit->size.kind, SizeSpec::Kind::kHeightWidth);  // ViT: int = square
  EXPECT_EQ(vit->size.height, 384);
}

TEST_F(PreprocessConfig, RefusalsNameWhatIsMissing) {
  expect_refused(R"({"image_processor_type": "DetrImageProcessor"})", "image processor 'DetrImageProcessor' is not implemented");
  expect_refused(R"({"image_processor_type": "ViTImageProcessor", "resample": 7})", "not a PIL resampling code");
  expect_refused(R"({"image_processor_type": "ViTImageProcessor", "do_flip_channel_order": true})",
                 "field 'do_flip_channel_order' = true is not implemented");
  expect_refused(R"({"image_processor_type": "ViTImageProcessor", "do_center_crop": true})", "has no centre crop");
  expect_refused(R"({"image_processor_type": "ViTImageProcessor", "size": {"longest_edge": 512}})", "longest_edge");
  expect_refused(R"({"image_processor_type": "ViTImageProcessor", "do_pad": true, "size": 224})", "without pad_size");
  expect_refused(R"({"do_resize": true})", "no image_processor_type");
  expect_refused(R"({"image_processor_type": "ViTImageProcessor", "image_std": [0.5, 0, 0.5]})", "image_std must be positive");
  expect_refused(R"({"image_processor_type": "ViTImageProcessor", "image_mean": [0.5, 0.5]})", "3 numbers");
  expect_refused(R"([1, 2])", "not a JSON object");
}

TEST_F(PreprocessConfig, FalseOrNullUnknownFieldsAreHarmless) {
  auto p = read(R"({"image_processor_type": "ViTImageProcessor", "do_flip_channel_order": false, "foo": null,
                    "processor_class": "ViltProcessor"})");
  EXPECT_TRUE(p.ok()) << p.error().to_string();
}

TEST_F(PreprocessConfig, NoFilesIsNotFound) {
  auto r = read_preprocess(dir_.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
}

TEST_F(PreprocessConfig, LetterboxFromGlassboxJsonOnly) {
  std::ofstream(dir_ / "glassbox.json")
      << R"({"vision": {"image_processor_type": "ViTImageProcessor", "letterbox": {"height": 64, "width": 64}}})";
  auto p = read_preprocess(dir_.string());
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  ASSERT_TRUE(p->letterbox.has_value());
  EXPECT_EQ(p->letterbox->fill, 114);
  RgbImage img;
  img.width = 32, img.height = 16;
  img.pixels.assign(32 * 16 * 3, 200);
  p->do_normalize = false;
  auto t = preprocess(img, *p, Layout::kNhwc);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->dims, (std::vector<int64_t>{1, 64, 64, 3}));
  EXPECT_FLOAT_EQ(t->values[0], static_cast<float>(114 / 255.0));           // top band: fill
  EXPECT_FLOAT_EQ(t->values[(32 * 64 + 5) * 3], static_cast<float>(200 / 255.0));  // middle: the image
}

}  // namespace
