// Umbrella note: kernels are declared in per-family headers in this folder
// (e.g. kernels/elementwise.h, kernels/gemm.h); x86 variants live in kernels/x86/.
#pragma once
