// Runs the glassbox CLI that the test target names (GLASSBOX_CLI) through the shell,
// stderr merged into stdout, and returns its exit code and everything it printed.
// Shared by the CLI tests of tests/runtime and tests/diag.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace glassbox::testing {

struct CliRun {
  int rc = -1;
  std::string out;
};

// `args` is shell text after the binary ("run MODEL --input x=FILE").
inline CliRun run_cli(const std::string& args) {
  const std::string cmd = std::string(GLASSBOX_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed: " + cmd};
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

}  // namespace glassbox::testing
