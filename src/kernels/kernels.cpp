// Anchor translation unit so the kernels library always has one source.
#include "kernels/kernels.h"
