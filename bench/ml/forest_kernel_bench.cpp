// The tree kernel alone (kernels/trees/forest.cpp), timed on a forest dumped by
// forest_kernel_bench.py: builds the layout glassbox would choose, checks every score against the
// reference walk, prints one JSON line with the p50 of the timed predict calls (1 thread).
// Built and run by forest_kernel_bench.py; not part of the CMake build.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "kernels/trees/forest.h"

using namespace glassbox::kernels::trees;

template <class T>
std::vector<T> read(std::ifstream& f, size_t n) {
  std::vector<T> v(n);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
  return v;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: forest_kernel_bench SPEC.bin X.f32 ROWS [REPEAT]\n");
    return 2;
  }
  std::ifstream f(argv[1], std::ios::binary);
  const auto hdr = read<int32_t>(f, 3);  // trees, targets, features
  ForestSpec s;
  s.n_targets = hdr[1];
  for (int t = 0; t < hdr[0]; ++t) {
    const int n = read<int32_t>(f, 1)[0];
    const auto mode = read<int32_t>(f, n), feat = read<int32_t>(f, n), tc = read<int32_t>(f, n),
               fc = read<int32_t>(f, n), miss = read<int32_t>(f, n), nw = read<int32_t>(f, n);
    const auto thr = read<double>(f, n);
    std::vector<TreeNode> tree(n);
    for (int i = 0; i < n; ++i) {
      TreeNode& tn = tree[i];
      tn.mode = static_cast<NodeMode>(mode[i]);
      tn.feature = feat[i];
      tn.threshold = thr[i];
      tn.true_child = tc[i];
      tn.false_child = fc[i];
      tn.missing_true = miss[i] != 0;
      if (tn.mode != NodeMode::kLeaf) continue;
      tn.leaf = static_cast<int32_t>(s.leaf_begin.size());
      s.leaf_begin.push_back(static_cast<int32_t>(s.weight_target.size()));
      const auto tg = read<int32_t>(f, nw[i]);
      const auto wv = read<double>(f, nw[i]);
      s.weight_target.insert(s.weight_target.end(), tg.begin(), tg.end());
      s.weight_value.insert(s.weight_value.end(), wv.begin(), wv.end());
    }
    s.trees.push_back(std::move(tree));
  }
  s.leaf_begin.push_back(static_cast<int32_t>(s.weight_target.size()));
  const Forest forest = Forest::build(s);
  std::ifstream xf(argv[2], std::ios::binary);
  const std::vector<char> raw((std::istreambuf_iterator<char>(xf)), std::istreambuf_iterator<char>());
  const int64_t rows = std::atoll(argv[3]), features = hdr[2];
  const int repeat = argc > 4 ? std::atoi(argv[4]) : 10;
  std::vector<float> x(raw.size() / 4);
  std::memcpy(x.data(), raw.data(), x.size() * 4);
  std::vector<double> want(static_cast<size_t>(rows * s.n_targets), 0.0), got(want.size());
  predict_reference(s, x.data(), rows, features, Aggregate::kSum, want.data());
  std::vector<double> ms;
  for (int r = 0; r < repeat + 2; ++r) {
    std::fill(got.begin(), got.end(), 0.0);
    const auto t0 = std::chrono::steady_clock::now();
    forest.predict(x.data(), rows, features, 0, forest.num_trees(), Aggregate::kSum, got.data());
    if (r >= 2) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      std::printf("{\"error\": \"score %zu differs from the reference walk\"}\n", i);
      return 1;
    }
  std::sort(ms.begin(), ms.end());
  std::printf("{\"p50_ms\": %.4f, \"min_ms\": %.4f, \"layout\": \"%s\"}\n", ms[ms.size() / 2], ms[0],
              forest.describe().c_str());
  return 0;
}
