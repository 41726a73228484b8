// The arithmetic of GEMMs on constant weights (SessionOptions::precision): a core vocabulary type,
// declared here so that ops and kernels can name it without including the runtime's session API.
#pragma once

#include <string>

#include "glassbox/error.h"

namespace glassbox {

// Arithmetic of the GEMMs whose right-hand side is a constant weight matrix (linear
// layers: MatMul, Gemm, the fused MatMul epilogues). kFp32: the exported model's own
// arithmetic. kBf16: those weights converted to bfloat16 once (when first packed), the
// activations converted per GEMM call, products accumulated and written in fp32;
// everything else (LayerNorm, Softmax, residual adds, activation x activation products
// such as attention scores) stays fp32. kInt8Dynamic: the same GEMMs, weights int8 per output
// channel, activations uint8 per row per call, int32 sums, fp32 epilogue (kernels/gemm_int8.h).
enum class Precision { kFp32, kBf16, kInt8Dynamic };
const char* precision_name(Precision p);  // "fp32", "bf16", "int8-dynamic"
// "fp32" | "bf16" | "int8-dynamic" (kInvalidArgument naming the choices otherwise).
Result<Precision> parse_precision(const std::string& text);

}  // namespace glassbox
