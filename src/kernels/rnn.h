// Recurrent layers (ONNX RNN, GRU, LSTM), float32, one direction per call.
//
// The input projection X * W^T (+ biases) of every time step is one GEMM; each
// step then multiplies the previous hidden state by R^T (one GEMM of
// [batch, hidden] x [hidden, gates * hidden]) and applies the gate equations.
// Gate orders follow ONNX: RNN [i], GRU [z, r, h], LSTM [i, o, f, c]; peepholes
// P = [i, o, f].
#pragma once

#include <cstdint>

namespace glassbox {
class ThreadPool;
}

namespace glassbox::kernels {

enum class RecurrentCell { kRnn, kGru, kLstm };

enum class ActivationKind {
  kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign, kSoftplus
};

struct Activation {
  ActivationKind kind = ActivationKind::kTanh;
  float alpha = 0.f;  // meaning per kind, as the ONNX op of the same name
  float beta = 0.f;
};

float apply_activation(const Activation& a, float x);

inline int64_t recurrent_gates(RecurrentCell c) {
  return c == RecurrentCell::kRnn ? 1 : c == RecurrentCell::kGru ? 3 : 4;
}

struct RecurrentDesc {
  RecurrentCell cell = RecurrentCell::kRnn;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int64_t num_directions = 1;  // of the whole layer (output layout)
  int64_t direction = 0;       // index of this call's direction in the outputs
  bool reverse = false;        // walk time from the end (per batch entry: from its length - 1)
  bool batch_major = false;    // layout=1: X [batch, seq, input], Y [batch, seq, dirs, hidden], states [batch, dirs, hidden]
  float clip = 0.f;            // > 0: gate pre-activations are clipped to [-clip, clip]
  bool linear_before_reset = false;  // GRU: apply R_h before multiplying by the reset gate
  bool input_forget = false;         // LSTM: forget gate = 1 - input gate
  Activation f, g, h;                // RNN uses f; GRU f, g; LSTM f, g, h
};

// Floats of scratch memory recurrent_f32 needs.
int64_t recurrent_scratch_floats(const RecurrentDesc& d);

// One direction. W [G*H, I], R [G*H, H] (this direction's slices); B [2*G*H]
// (Wb then Rb), P [3*H], seq_lens [batch], h0/c0 (states layout) may be nullptr.
// Y, Y_h, Y_c (full output tensors, nullptr when not wanted) get this
// direction's part; Y is zero past each batch entry's length. Every seq_lens
// value must lie in [0, seq] (the caller checks). Entries of length 0 keep
// their initial state. The input projection (all steps at once) runs on `pool`
// (nullptr: calling thread); the small per-step products run on the calling thread.
void recurrent_f32(const RecurrentDesc& d, const float* X, const float* W, const float* R, const float* B,
                   const float* P, const int32_t* seq_lens, const float* h0, const float* c0, float* Y, float* Y_h,
                   float* Y_c, float* scratch, ThreadPool* pool);

}  // namespace glassbox::kernels
