// Shared by RNN, GRU and LSTM (opset 7+): attributes, input validation and
// the direction loop around kernels::recurrent_f32.
//   inputs  X, W, R, B, sequence_lens, initial_h (+ LSTM: initial_c, P)
//   outputs Y, Y_h (+ LSTM: Y_c), each optional
#pragma once

#include <string>
#include <vector>

#include "kernels/rnn.h"
#include "ops/op.h"

namespace glassbox::ops {

struct RecurrentAttrs {
  // Per direction, forward first: RNN f; GRU f, g; LSTM f, g, h.
  // Spec defaults: RNN Tanh; GRU Sigmoid, Tanh; LSTM Sigmoid, Tanh, Tanh.
  std::vector<kernels::Activation> activations;
  float clip = 0.f;                  // absent (0): no clipping
  std::string direction = "forward";  // forward | reverse | bidirectional
  int64_t hidden_size = 0;           // 0: taken from R's shape
  int64_t layout = 0;                // 0: [seq, batch, ...]; 1 (opset 14+): [batch, seq, ...]
  bool linear_before_reset = false;  // GRU only
  bool input_forget = false;         // LSTM only
};

Result<RecurrentAttrs> parse_recurrent_attrs(const graph::Node& node, kernels::RecurrentCell cell, int64_t opset);

Status run_recurrent(ComputeContext& ctx, kernels::RecurrentCell cell, const RecurrentAttrs& a);

class RecurrentOp final : public Op {
 public:
  RecurrentOp(kernels::RecurrentCell cell, RecurrentAttrs a) : cell_(cell), a_(std::move(a)) {}
  Status compute(ComputeContext& ctx) const override { return run_recurrent(ctx, cell_, a_); }

 private:
  kernels::RecurrentCell cell_;
  RecurrentAttrs a_;
};

}  // namespace glassbox::ops
