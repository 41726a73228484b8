// Test driver for the peer comparisons (pillow_parity_test.py, transformers_js_test.js):
//   vision_tool decode IMAGE OUT.npy                       uint8 [H, W, 3]
//   vision_tool resize IMAGE WIDTH HEIGHT RESAMPLE OUT.npy uint8 [H, W, 3] (decode, then Pillow's resize)
//   vision_tool preprocess MODEL_DIR IMAGE OUT.npy [nchw|nhwc]  float32 pixel tensor
// Prints a JSON line (decode info / steps) on stdout; an error goes to stderr with exit code 2.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "glassbox/vision.h"

namespace {

using namespace glassbox::vision;

void write_npy(const std::string& path, const char* descr, const std::vector<int64_t>& dims, const void* data,
               size_t bytes) {
  std::string shape = "(";
  for (auto d : dims) shape += std::to_string(d) + ", ";
  shape += ")";
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << header;
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

int fail(const glassbox::Error& e) {
  std::cerr << glassbox::error_code_name(e.code) << ": " << e.to_string() << "\n";
  return 2;
}

nlohmann::json info_json(const DecodeInfo& i) {
  return {{"format", image_format_name(i.format)}, {"stored_width", i.stored_width}, {"stored_height", i.stored_height},
          {"colour", i.colour}, {"bit_depth", i.bit_depth}, {"exif_orientation", i.exif_orientation},
          {"orientation_applied", i.orientation_applied}, {"alpha_dropped", i.alpha_dropped}};
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() >= 3 && a[0] == "decode") {
    auto d = decode_image_file(a[1]);
    if (!d.ok()) return fail(d.error());
    write_npy(a[2], "|u1", {d->image.height, d->image.width, 3}, d->image.pixels.data(), d->image.pixels.size());
    std::cout << info_json(d->info).dump() << "\n";
    return 0;
  }
  if (a.size() >= 6 && a[0] == "resize") {
    auto d = decode_image_file(a[1]);
    if (!d.ok()) return fail(d.error());
    const RgbImage r = resize_pil(d->image, std::stoi(a[2]), std::stoi(a[3]), static_cast<Resample>(std::stoi(a[4])));
    write_npy(a[5], "|u1", {r.height, r.width, 3}, r.pixels.data(), r.pixels.size());
    return 0;
  }
  if (a.size() >= 4 && a[0] == "preprocess") {
    auto p = read_preprocess(a[1]);
    if (!p.ok()) return fail(p.error());
    auto d = decode_image_file(a[2]);
    if (!d.ok()) return fail(d.error());
    const Layout layout = a.size() >= 5 && a[4] == "nhwc" ? Layout::kNhwc : Layout::kNchw;
    auto t = preprocess(d->image, *p, layout);
    if (!t.ok()) return fail(t.error());
    write_npy(a[3], "<f4", t->dims, t->values.data(), t->values.size() * sizeof(float));
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : p->steps) steps.push_back({{"field", s.field}, {"value", s.value}, {"source", s.source}, {"risk", s.risk}});
    std::cout << nlohmann::json{{"steps", steps}, {"resized", {t->resized_width, t->resized_height}}}.dump() << "\n";
    return 0;
  }
  std::cerr << "usage: vision_tool decode|resize|preprocess ...\n";
  return 1;
}
