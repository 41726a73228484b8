// The Hugging Face image processor classes glassbox honours, with the defaults their Python
// classes apply to a field preprocessor_config.json leaves out (transformers 4.x,
// models/<name>/image_processing_<name>.py; the constants are image_utils.py's).
#pragma once

#include <optional>
#include <string>

#include "glassbox/vision.h"

namespace glassbox::vision::detail {

struct ProcessorDefaults {
  const char* name;
  SizeSpec size;
  bool int_size_is_square;  // legacy "size": 224 means height/width (true) or shortest_edge (false)
  Resample resample;
  bool do_center_crop;  // the class default; false for classes without the step (ViT, SigLIP,
                        // ConvNeXt), where a file's do_center_crop: true is refused: Python
                        // ignores the field, transformers.js applies it
  int64_t crop;         // square crop size when do_center_crop
  float mean[3];
  float std[3];
  std::optional<double> crop_pct;  // ConvNeXt's rule instead of do_center_crop
};

// nullptr when glassbox does not know the class (then it is refused by name).
const ProcessorDefaults* find_processor_defaults(const std::string& type);

// "ViTImageProcessor, CLIPImageProcessor, ..." for error messages and docs.
std::string known_processor_types();

}  // namespace glassbox::vision::detail
