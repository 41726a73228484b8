// SessionOptions::weights_cache (runtime/weights_cache.h): a miss writes the file after the
// first run, a hit maps it and gives bitwise the outputs of a session without the cache
// (fp32, bf16, int8 MatMulInteger, and the torch.onnx-exported tiny BERT); a changed model,
// a flipped bit, a truncated file, another file format version and another CPU key are each
// detected, reported with their reason and rebuilt, never used (also a one-byte change at
// either end of the payload, checked in the background while the model loads); several processes creating
// the file at once leave one valid file; an unusable directory is a warning, not an error.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "bert_inputs.h"
#include "glassbox/tensor_io.h"
#include "runtime/weights_cache.h"
#include "test_models.h"

namespace glassbox::rt_test {
namespace {

namespace fs = std::filesystem;

// x [4, 64] -> MatMul W1 [64, 96] -> Relu -> Gemm W2 [48, 96] (transB) + c -> y [4, 48]:
// a packed MatMul (fused or not) and, in bf16, a packed Gemm with trans_b.
std::string float_model(const TempDir& dir, const std::string& name, uint32_t seed) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {4, 64});
  add_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {4, 48});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> w1(64 * 96), w2(48 * 96), c(48);
  for (auto* v : {&w1, &w2, &c})
    for (auto& x : *v) x = u(rng);
  add_initializer(g, "W1", onnx::TensorProto::FLOAT, {64, 96}, w1);
  add_initializer(g, "W2", onnx::TensorProto::FLOAT, {48, 96}, w2);
  add_initializer(g, "c", onnx::TensorProto::FLOAT, {48}, c);
  add_node(g, "MatMul", {"x", "W1"}, {"h"}, "mm");
  add_node(g, "Relu", {"h"}, {"r"}, "relu");
  auto* gemm = add_node(g, "Gemm", {"r", "W2", "c"}, {"y"}, "gemm");
  add_int_attr(gemm, "transB", 1);
  return write_model(m, dir.file(name));
}

// a uint8 [4, 64] x constant int8 B [64, 80] -> int32 [4, 80] (MatMulInteger, zero points 3 and 0).
std::string int8_model(const TempDir& dir) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_value(g->mutable_input(), "a", onnx::TensorProto::UINT8, {4, 64});
  add_value(g->mutable_output(), "y", onnx::TensorProto::INT32, {4, 80});
  std::mt19937 rng(5);
  std::vector<int8_t> b(64 * 80);
  for (auto& v : b) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  add_initializer(g, "B", onnx::TensorProto::INT8, {64, 80}, b);
  add_initializer(g, "a_zp", onnx::TensorProto::UINT8, {}, std::vector<uint8_t>{3});
  add_node(g, "MatMulInteger", {"a", "B", "a_zp"}, {"y"}, "mmi");
  return write_model(m, dir.file("int8.onnx"));
}

std::vector<NamedTensor> float_inputs() {
  std::vector<float> x(4 * 64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) / 50.f - 1.f;
  return {{"x", float_tensor({4, 64}, x)}};
}

std::vector<NamedTensor> int8_inputs() {
  std::vector<uint8_t> a(4 * 64);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>((i * 53) % 256);
  return {{"a", make_tensor(DataType::kUInt8, {4, 64}, a)}};
}

struct Loaded {
  std::vector<NamedTensor> outputs;
  WeightsCacheReport report;  // after the run, the file written
};

Loaded load_and_run(const std::string& model, const std::vector<NamedTensor>& inputs, const std::string& cache,
                    Precision precision = Precision::kFp32) {
  SessionOptions o;
  o.threads = 2;
  o.precision = precision;
  o.weights_cache = cache;
  auto s = Session::load(model, o);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().to_string());
  if (!s.ok()) return {};
  const WeightsCacheReport at_load = s->weights_cache_report();
  auto out = s->run(inputs);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
  Loaded r{out.ok() ? std::move(out).value() : std::vector<NamedTensor>{}, s->weights_cache_report(true)};
  EXPECT_EQ(r.report.state, at_load.state);
  return r;
}

// Bitwise equality of every output.
void expect_same(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].tensor.shape(), b[i].tensor.shape());
    ASSERT_EQ(a[i].tensor.nbytes(), b[i].tensor.nbytes());
    EXPECT_EQ(std::memcmp(a[i].tensor.raw(), b[i].tensor.raw(), a[i].tensor.nbytes()), 0) << a[i].name;
  }
}

// No cache -> miss (writes) -> hit (maps), all three bitwise equal.
void check_miss_then_hit(const std::string& model, const std::vector<NamedTensor>& inputs, Precision p) {
  TempDir cache;
  const Loaded plain = load_and_run(model, inputs, "", p);
  EXPECT_EQ(plain.report.state, "off");
  const Loaded miss = load_and_run(model, inputs, cache.path(), p);
  EXPECT_EQ(miss.report.state, "miss") << miss.report.reason;
  EXPECT_EQ(miss.report.write.rfind("written:", 0), 0u) << miss.report.write;
  EXPECT_GT(miss.report.packings, 0);
  ASSERT_TRUE(fs::exists(miss.report.file)) << miss.report.file;
  const Loaded hit = load_and_run(model, inputs, cache.path(), p);
  EXPECT_EQ(hit.report.state, "hit") << hit.report.reason;
  EXPECT_EQ(hit.report.used, miss.report.packings);
  EXPECT_EQ(hit.report.refused, 0) << hit.report.refused_why;
  EXPECT_EQ(hit.report.write, "");
  expect_same(plain.outputs, miss.outputs);
  expect_same(plain.outputs, hit.outputs);
}

TEST(WeightsCache, OffByDefault) {
  EXPECT_EQ(SessionOptions{}.weights_cache, "");
  TempDir dir;
  const Loaded r = load_and_run(float_model(dir, "m.onnx", 1), float_inputs(), "");
  EXPECT_EQ(r.report.state, "off");
  EXPECT_EQ(r.report.file, "");
}

TEST(WeightsCache, MissThenHitFp32) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir;
  check_miss_then_hit(float_model(dir, "m.onnx", 1), float_inputs(), Precision::kFp32);
}

TEST(WeightsCache, MissThenHitBf16) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir;
  check_miss_then_hit(float_model(dir, "m.onnx", 1), float_inputs(), Precision::kBf16);
}

TEST(WeightsCache, MissThenHitInt8Dynamic) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir;
  check_miss_then_hit(float_model(dir, "m.onnx", 1), float_inputs(), Precision::kInt8Dynamic);
}

TEST(WeightsCache, MissThenHitInt8MatMulInteger) {
  REQUIRE_OPS("MatMulInteger");
  TempDir dir;
  check_miss_then_hit(int8_model(dir), int8_inputs(), Precision::kFp32);
}

TEST(WeightsCache, MissThenHitTinyBert) {
  const std::string model = generated_model_path("bert_tiny_op17");
  if (!fs::exists(model)) GTEST_FAIL() << "the generated test models are missing: run scripts/make_test_models.py";
  auto probe = Session::load(model);
  ASSERT_TRUE(probe.ok()) << probe.error().to_string();
  const auto inputs = bert_inputs(*probe, 16, {16, 11}, 3);
  for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kInt8Dynamic}) check_miss_then_hit(model, inputs, p);
}

// Writes a valid cache file for `model` in `cache` and returns its path.
std::string written_file(const std::string& model, const std::string& cache) {
  const Loaded miss = load_and_run(model, float_inputs(), cache);
  EXPECT_EQ(miss.report.write.rfind("written:", 0), 0u) << miss.report.write;
  return miss.report.file;
}

// The next load finds the file unusable (reason containing `why`), runs exactly as without
// a cache, replaces the file, and the load after that hits.
void expect_rebuilt(const std::string& model, const std::string& cache, const std::string& why) {
  const Loaded plain = load_and_run(model, float_inputs(), "");
  const Loaded rebuilt = load_and_run(model, float_inputs(), cache);
  EXPECT_EQ(rebuilt.report.state, "rebuilt");
  EXPECT_NE(rebuilt.report.reason.find(why), std::string::npos) << rebuilt.report.reason;
  EXPECT_EQ(rebuilt.report.used, 0);
  EXPECT_EQ(rebuilt.report.write.rfind("written:", 0), 0u) << rebuilt.report.write;
  expect_same(plain.outputs, rebuilt.outputs);
  const Loaded hit = load_and_run(model, float_inputs(), cache);
  EXPECT_EQ(hit.report.state, "hit") << hit.report.reason;
  expect_same(plain.outputs, hit.outputs);
}

void patch_file(const std::string& path, uint64_t offset, const std::function<void(char&)>& change) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good());
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  change(c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

TEST(WeightsCache, StaleModelIsRebuilt) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir, cache;
  const std::string model = float_model(dir, "m.onnx", 1);
  written_file(model, cache.path());
  const auto size_before = fs::file_size(model);
  float_model(dir, "m.onnx", 2);  // same path, same size, other weights
  ASSERT_EQ(fs::file_size(model), size_before);
  expect_rebuilt(model, cache.path(), "files differs");
}

TEST(WeightsCache, FlippedPayloadBitIsRebuilt) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir, cache;
  const std::string model = float_model(dir, "m.onnx", 1);
  const std::string file = written_file(model, cache.path());
  uint64_t payload_offset = 0;  // header bytes [40, 48): where the first segment starts
  {
    std::ifstream in(file, std::ios::binary);
    in.seekg(40);
    in.read(reinterpret_cast<char*>(&payload_offset), sizeof payload_offset);
  }
  ASSERT_GT(payload_offset, 64u);
  patch_file(file, payload_offset + 100, [](char& c) { c ^= 0x10; });
  expect_rebuilt(model, cache.path(), "corrupt: checksum mismatch");
}

// The segments are checked on a background thread while the model is parsed; a change of one
// byte at the payload's first or last byte is still found before anything is used.
TEST(WeightsCache, OneByteChangeAtThePayloadEndsIsRebuilt) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir, cache;
  const std::string model = float_model(dir, "m.onnx", 1);
  const std::string file = written_file(model, cache.path());
  uint64_t payload_offset = 0;
  {
    std::ifstream in(file, std::ios::binary);
    in.seekg(40);
    in.read(reinterpret_cast<char*>(&payload_offset), sizeof payload_offset);
  }
  patch_file(file, payload_offset, [](char& c) { c = static_cast<char>(c + 1); });
  expect_rebuilt(model, cache.path(), "corrupt: checksum mismatch in segment 0 of");
  // The last byte of the last segment of the file the rebuild wrote (segments: [offset, bytes, checksum]).
  uint64_t header[8] = {};
  {
    std::ifstream in(file, std::ios::binary);
    in.read(reinterpret_cast<char*>(header), sizeof header);
  }
  std::string text(header[3], '\0');  // header words: magic, version, index offset, index bytes, ..., payload offset
  {
    std::ifstream in(file, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(header[2]));
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
  }
  uint64_t end = 0;
  const nlohmann::json index = nlohmann::json::parse(text);
  for (const auto& e : index["entries"])
    for (const auto& seg : e["segments"]) end = std::max(end, seg[0].get<uint64_t>() + seg[1].get<uint64_t>());
  ASSERT_GT(end, 0u);
  patch_file(file, header[5] + end - 1, [](char& c) { c = static_cast<char>(c ^ 0x80); });  // payload offset + end - 1
  expect_rebuilt(model, cache.path(), "corrupt: checksum mismatch in segment");
}

TEST(WeightsCache, FlippedIndexBitIsRebuilt) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir, cache;
  const std::string model = float_model(dir, "m.onnx", 1);
  const std::string file = written_file(model, cache.path());
  patch_file(file, 64 + 10, [](char& c) { c ^= 0x01; });  // the JSON index starts at 64
  expect_rebuilt(model, cache.path(), "index checksum");
}

TEST(WeightsCache, TruncatedFileIsRebuilt) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir, cache;
  const std::string model = float_model(dir, "m.onnx", 1);
  const std::string file = written_file(model, cache.path());
  fs::resize_file(file, fs::file_size(file) - 1000);
  expect_rebuilt(model, cache.path(), "truncated");
  fs::resize_file(file, 10);  // the file the rebuild wrote
  expect_rebuilt(model, cache.path(), "truncated: 10 bytes");
}

TEST(WeightsCache, OtherFormatVersionIsRebuilt) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir, cache;
  const std::string model = float_model(dir, "m.onnx", 1);
  const std::string file = written_file(model, cache.path());
  patch_file(file, 8, [](char& c) { c = static_cast<char>(runtime::kWeightsCacheFormatVersion + 7); });
  expect_rebuilt(model, cache.path(), "file format version");
}

TEST(WeightsCache, OtherCpuIsRebuilt) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir, cache;
  const std::string model = float_model(dir, "m.onnx", 1);
  runtime::set_weights_cache_cpu_for_testing("onednn 0.0.0 (test); isa 0x1; cpu sse2");
  written_file(model, cache.path());
  runtime::set_weights_cache_cpu_for_testing("");
  expect_rebuilt(model, cache.path(), "stale: cpu differs");
}

TEST(WeightsCache, UnusableDirectoryIsAWarningNotAnError) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir;
  const std::string model = float_model(dir, "m.onnx", 1);
  std::ofstream(dir.file("plain_file")) << "x";
  const Loaded plain = load_and_run(model, float_inputs(), "");
  const Loaded r = load_and_run(model, float_inputs(), dir.file("plain_file") + "/cache");  // a directory cannot be made there
  EXPECT_EQ(r.report.state, "unavailable");
  EXPECT_NE(r.report.reason.find("cannot create"), std::string::npos) << r.report.reason;
  expect_same(plain.outputs, r.outputs);
}

// One process of ConcurrentCreationByProcesses: this test binary re-run with only this test and
// GB_WEIGHTS_CACHE_WORKER="MODEL|CACHE_DIR|OUT.npy" (test-only; skipped when unset): loads with
// the cache, runs, writes the output, and its session's end waits for the cache write.
TEST(WeightsCacheWorker, LoadRunWrite) {
  const char* spec = std::getenv("GB_WEIGHTS_CACHE_WORKER");
  if (!spec) GTEST_SKIP() << "a worker process of WeightsCache.ConcurrentCreationByProcesses";
  const std::string s(spec);
  const size_t a = s.find('|'), b = s.rfind('|');
  ASSERT_TRUE(a != std::string::npos && b > a);
  SessionOptions o;
  o.threads = 1;
  o.weights_cache = s.substr(a + 1, b - a - 1);
  auto session = Session::load(s.substr(0, a), o);
  ASSERT_TRUE(session.ok()) << session.error().to_string();
  auto out = session->run(float_inputs());
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  ASSERT_TRUE(runtime::write_npy(s.substr(b + 1), (*out)[0].tensor).ok());
}

// N processes start together on an empty cache directory: all succeed with the same outputs,
// one valid file is left (the next load hits) and no temporary file remains.
TEST(WeightsCache, ConcurrentCreationByProcesses) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  TempDir dir, cache;
  const std::string model = float_model(dir, "m.onnx", 1);
  constexpr int kProcesses = 4;
  std::vector<std::string> envs;  // built before fork: the child only execs
  for (int i = 0; i < kProcesses; ++i)
    envs.push_back("GB_WEIGHTS_CACHE_WORKER=" + model + "|" + cache.path() + "|" + dir.file("out" + std::to_string(i) + ".npy"));
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<pid_t> pids;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int null_fd = ::open("/dev/null", O_WRONLY);
      if (null_fd >= 0) ::dup2(null_fd, STDOUT_FILENO);
      char* const argv[] = {const_cast<char*>(self.c_str()), const_cast<char*>("--gtest_filter=WeightsCacheWorker.*"), nullptr};
      char* const envp[] = {const_cast<char*>(envs[static_cast<size_t>(i)].c_str()), nullptr};
      execve(self.c_str(), argv, envp);
      _exit(127);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  auto first = runtime::read_npy(dir.file("out0.npy"));
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  for (int i = 1; i < kProcesses; ++i) {
    auto other = runtime::read_npy(dir.file("out" + std::to_string(i) + ".npy"));
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(values_of<float>(*first), values_of<float>(*other));
  }
  int files = 0;
  for (const auto& e : fs::directory_iterator(cache.path())) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;
    files += name.size() > 5 && name.substr(name.size() - 5) == ".gbpw";
  }
  EXPECT_EQ(files, 1);
  SessionOptions o;
  o.threads = 1;
  o.weights_cache = cache.path();
  auto s = Session::load(model, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->weights_cache_report().state, "hit") << s->weights_cache_report().reason;
  auto out = s->run(float_inputs());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(values_of<float>((*out)[0].tensor), values_of<float>(*first));
}

// `glassbox explain MODEL --weights-cache DIR` says where the file is and whether this load hit.
TEST(WeightsCache, ExplainShowsTheState) {
  REQUIRE_OPS("MatMul", "Relu", "Gemm");
  if (!fs::exists(GLASSBOX_CLI)) GTEST_FAIL() << "no CLI binary at " << GLASSBOX_CLI;
  TempDir dir, cache;
  const std::string model = float_model(dir, "m.onnx", 1);
  auto explain = [&] {
    const std::string cmd = std::string(GLASSBOX_CLI) + " explain " + model + " --weights-cache " + cache.path() + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << out;
    return out;
  };
  std::string out = explain();
  EXPECT_NE(out.find("weights_cache = " + cache.path()), std::string::npos) << out;
  EXPECT_NE(out.find("state: miss (no cache file yet"), std::string::npos) << out;
  written_file(model, cache.path());
  out = explain();
  EXPECT_NE(out.find("state: hit (key matches"), std::string::npos) << out;
  EXPECT_NE(out.find("file: " + cache.path() + "/m-"), std::string::npos) << out;
}

}  // namespace
}  // namespace glassbox::rt_test
