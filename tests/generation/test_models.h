// Paths of the decoder test models (scripts/make_decoder_models.py, run by the ctest fixture
// generation_models into the build directory) and small helpers shared by the generation tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "glassbox/generation.h"

namespace gbtest {

inline std::string decoder_model(const std::string& name) {
  const auto dir = std::filesystem::path(GLASSBOX_DECODER_MODELS) / name;
  EXPECT_TRUE(std::filesystem::exists(dir / "config.json") || std::filesystem::exists(dir / "genai_config.json"))
      << dir << " is missing: ctest runs the fixtures generation_models and generation_layout_models, or run "
      << "scripts/make_decoder_models.py and scripts/make_decoder_layouts.py --out " << GLASSBOX_DECODER_MODELS;
  return dir.string();
}

inline glassbox::GenerationSession load_decoder(const std::string& name, glassbox::GenerationOptions opts = {}) {
  if (opts.session.threads == 0) opts.session.threads = 1;
  auto s = glassbox::GenerationSession::load(decoder_model(name), opts);
  if (!s.ok()) ADD_FAILURE() << s.error().to_string();
  return std::move(s).value();
}

}  // namespace gbtest
