// Paths of the decoder test models (scripts/make_decoder_models.py, run by the ctest fixture
// generation_models into the build directory) and small helpers shared by the generation tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
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

// A shell command's standard output and pclose's status (WEXITSTATUS gives the exit code).
struct ShellRun {
  int status = -1;
  std::string out;
};

inline ShellRun shell(const std::string& cmd) {
  ShellRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  r.status = pclose(p);
  return r;
}

}  // namespace gbtest
