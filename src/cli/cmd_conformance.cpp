// glassbox conformance DIR... [--rtol R] [--atol A] [--exclude FILE] [--strict]
// One line per case: PASS|FAIL|UNSUPPORTED name reason; last line "N passed, N failed, N skipped".
#include <iostream>

#include "cli/cli_common.h"
#include "cli/session_flags.h"
#include "glassbox/conformance.h"

namespace {

struct ConformanceArgs {
  std::vector<std::string> dirs;
  double rtol = 1e-3;
  double atol = 1e-7;
  std::string exclude;
  bool strict = false;
  glassbox::cli::SessionFlags session;
};

void conformance_command(const ConformanceArgs& a) {
  using namespace glassbox;
  runtime::ConformanceOptions opts;
  opts.rtol = a.rtol;
  opts.atol = a.atol;
  a.session.apply(opts.session);
  if (!a.exclude.empty()) {
    auto ex = runtime::read_exclusion_file(a.exclude);
    if (!ex.ok()) cli::fail("conformance", ex.error());
    opts.excluded = std::move(ex).value();
  }
  int passed = 0, failed = 0, skipped = 0, unexpected_unsupported = 0;
  for (const auto& dir : a.dirs) {
    auto cases = runtime::find_test_cases(dir);
    if (cases.empty())
      cli::fail("conformance", make_error(ErrorCode::kNotFound, "no test case (directory with model.onnx) found", dir));
    for (const auto& c : cases) {
      auto r = runtime::run_test_case(c, opts);
      const char* tag = r.outcome == runtime::CaseOutcome::kPass   ? "PASS"
                        : r.outcome == runtime::CaseOutcome::kFail ? "FAIL"
                                                                   : "UNSUPPORTED";
      std::cout << tag << " " << r.name << (r.reason.empty() ? "" : " " + r.reason) << "\n" << std::flush;
      if (r.outcome == runtime::CaseOutcome::kPass) ++passed;
      else if (r.outcome == runtime::CaseOutcome::kFail) ++failed;
      else {
        ++skipped;
        if (!r.excluded) ++unexpected_unsupported;
      }
    }
  }
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  if (failed > 0 || (a.strict && unexpected_unsupported > 0)) throw CLI::RuntimeError(1);
}

}  // namespace

void add_conformance_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("conformance", "Run ONNX backend test cases (model.onnx + test_data_set_*) and compare outputs");
  auto a = std::make_shared<ConformanceArgs>();
  cmd->add_option("dirs", a->dirs, "test case directories, or folders of them")->required();
  cmd->add_option("--rtol", a->rtol, "relative tolerance for floating-point outputs (default 1e-3, the ONNX backend's)");
  cmd->add_option("--atol", a->atol, "absolute tolerance for floating-point outputs (default 1e-7, the ONNX backend's)");
  cmd->add_option("--exclude", a->exclude, "file of 'case_name reason' lines: these cases are skipped (counted as skipped)");
  cmd->add_flag("--strict", a->strict, "exit non-zero also when a case not on the exclusion list is UNSUPPORTED");
  using glassbox::cli::SessionFlag;
  glassbox::cli::add_session_flags(cmd, a->session, {SessionFlag::kOptLevel, SessionFlag::kThreads});
  cmd->callback([a] { conformance_command(*a); });
}
