#include "glassbox/precision.h"

namespace glassbox {

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kBf16: return "bf16";
    case Precision::kInt8Dynamic: return "int8-dynamic";
  }
  return "?";
}

Result<Precision> parse_precision(const std::string& text) {
  for (Precision p : {Precision::kFp32, Precision::kBf16, Precision::kInt8Dynamic})
    if (text == precision_name(p)) return p;
  return make_error(ErrorCode::kInvalidArgument, "precision '" + text + "' is unknown", {},
                    "use fp32, bf16 or int8-dynamic");
}

}  // namespace glassbox
