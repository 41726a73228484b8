// Runs ONNX backend test cases (model.onnx + test_data_set_*/input_*.pb,
// output_*.pb) through a Session and compares with the expected outputs.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "glassbox/session.h"

namespace glassbox::runtime {

struct ConformanceOptions {
  double rtol = 1e-3;  // ONNX backend test default
  double atol = 1e-7;  // ONNX backend test default
  SessionOptions session;
  std::map<std::string, std::string> excluded;  // case name -> reason
};

enum class CaseOutcome { kPass, kFail, kUnsupported };

struct CaseResult {
  std::string name;
  CaseOutcome outcome = CaseOutcome::kFail;
  std::string reason;
  bool excluded = false;  // skipped because it is on the exclusion list
};

// True if dir holds model.onnx.
bool is_test_case_dir(const std::string& dir);
// dir itself if it is a case, otherwise its sub-directories that are cases, sorted.
std::vector<std::string> find_test_cases(const std::string& dir);

CaseResult run_test_case(const std::string& dir, const ConformanceOptions& options);

// Compares actual with expected: same dtype and shape; floats within
// |a - e| <= atol + rtol * |e| (NaN equals NaN); other types exactly.
// Returns "" when equal, otherwise a one-line description of the first mismatch.
std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol);
// The same for values: same kind; sequences element by element.
std::string compare_values(const Value& actual, const Value& expected, double rtol, double atol);

// Reads "name  reason..." lines ('#' starts a comment) into name -> reason.
Result<std::map<std::string, std::string>> read_exclusion_file(const std::string& path);

}  // namespace glassbox::runtime
