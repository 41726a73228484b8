#include "kernels/rnn.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/gemm.h"

namespace glassbox::kernels {

float apply_activation(const Activation& a, float x) {
  switch (a.kind) {
    case ActivationKind::kRelu: return std::max(0.f, x);
    case ActivationKind::kTanh: return std::tanh(x);
    case ActivationKind::kSigmoid: return 1.f / (1.f + std::exp(-x));
    case ActivationKind::kAffine: return a.alpha * x + a.beta;
    case ActivationKind::kLeakyRelu: return x >= 0.f ? x : a.alpha * x;
    case ActivationKind::kThresholdedRelu: return x >= a.alpha ? x : 0.f;
    case ActivationKind::kScaledTanh: return a.alpha * std::tanh(a.beta * x);
    case ActivationKind::kHardSigmoid: return std::min(1.f, std::max(0.f, a.alpha * x + a.beta));
    case ActivationKind::kElu: return x >= 0.f ? x : a.alpha * (std::exp(x) - 1.f);
    case ActivationKind::kSoftsign: return x / (1.f + std::fabs(x));
    case ActivationKind::kSoftplus: return std::log1p(std::exp(x));
  }
  return x;
}

int64_t recurrent_scratch_floats(const RecurrentDesc& d) {
  const int64_t gh = recurrent_gates(d.cell) * d.hidden, bh = d.batch * d.hidden;
  // xw [seq*batch, G*H], hr [batch, G*H], h, c, and for GRU r*h and its product.
  return d.seq * d.batch * gh + d.batch * gh + 4 * bh;
}

namespace {

// y[M, N] (rows ldy apart) = x[M, K] * w[N, K]^T.
void matmul_nt(const float* x, const float* w, float* y, int64_t M, int64_t N, int64_t K, int64_t ldy,
               ThreadPool* pool) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i) std::fill(y + i * ldy, y + i * ldy + N, 0.f);
    return;
  }
  GemmDesc g;
  g.M = M;
  g.N = N;
  g.K = K;
  g.trans_b = true;
  g.lda = K;
  g.ldb = K;
  g.ldc = ldy;
  gemm_f32(g, x, w, y, pool);
}

}  // namespace

void recurrent_f32(const RecurrentDesc& d, const float* X, const float* W, const float* R, const float* B,
                   const float* P, const int32_t* seq_lens, const float* h0, const float* c0, float* Y, float* Y_h,
                   float* Y_c, float* scratch, ThreadPool* pool) {
  const int64_t H = d.hidden, G = recurrent_gates(d.cell), GH = G * H, nb = d.batch, T = d.seq, nd = d.num_directions;
  const bool gru = d.cell == RecurrentCell::kGru, lstm = d.cell == RecurrentCell::kLstm;
  float* xw = scratch;
  float* hr = xw + T * nb * GH;
  float* h = hr + nb * GH;
  float* c = h + nb * H;
  float* rh = c + nb * H;   // GRU: r (.) H_{t-1}
  float* rhr = rh + nb * H;  // GRU: (r (.) H_{t-1}) * R_h^T

  // Row of X / xw for (t, b), and where a state row and a Y row live.
  auto xrow = [&](int64_t t, int64_t b) { return d.batch_major ? b * T + t : t * nb + b; };
  auto state_off = [&](int64_t b) { return (d.batch_major ? b * nd + d.direction : d.direction * nb + b) * H; };
  auto y_off = [&](int64_t t, int64_t b) {
    return (d.batch_major ? (b * T + t) * nd + d.direction : (t * nd + d.direction) * nb + b) * H;
  };
  auto clip = [&](float v) { return d.clip > 0.f ? std::min(d.clip, std::max(-d.clip, v)) : v; };
  auto f = [&](float v) { return apply_activation(d.f, clip(v)); };
  auto g = [&](float v) { return apply_activation(d.g, clip(v)); };

  // Input projection for all steps, plus the biases that simply add up. The
  // GRU h gate with linear_before_reset keeps R_bh apart (it is scaled by r).
  matmul_nt(X, W, xw, T * nb, GH, d.input, GH, pool);
  if (B) {
    for (int64_t r = 0; r < T * nb; ++r)
      for (int64_t k = 0; k < GH; ++k) {
        const bool rb_apart = gru && d.linear_before_reset && k >= 2 * H;
        xw[r * GH + k] += B[k] + (rb_apart ? 0.f : B[GH + k]);
      }
  }
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t j = 0; j < H; ++j) {
      h[b * H + j] = h0 ? h0[state_off(b) + j] : 0.f;
      c[b * H + j] = c0 ? c0[state_off(b) + j] : 0.f;
    }
  }
  const float* Pi = P;
  const float* Po = P ? P + H : nullptr;
  const float* Pf = P ? P + 2 * H : nullptr;

  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = d.reverse ? T - 1 - s : s;
    auto active = [&](int64_t b) { return t < (seq_lens ? seq_lens[b] : T); };
    // GRU without linear_before_reset multiplies R_h by r (.) H_{t-1}: only z and r here.
    const int64_t n_rec = gru && !d.linear_before_reset ? 2 * H : GH;
    matmul_nt(h, R, hr, nb, n_rec, H, GH, nullptr);
    if (gru && !d.linear_before_reset) {
      for (int64_t b = 0; b < nb; ++b)
        for (int64_t j = 0; j < H; ++j) {
          const float r = f(xw[xrow(t, b) * GH + H + j] + hr[b * GH + H + j]);
          rh[b * H + j] = active(b) ? r * h[b * H + j] : 0.f;
        }
      matmul_nt(rh, R + 2 * H * H, rhr, nb, H, H, H, nullptr);
    }
    for (int64_t b = 0; b < nb; ++b) {
      float* hb = h + b * H;
      float* cb = c + b * H;
      if (!active(b)) {
        if (Y) std::memset(Y + y_off(t, b), 0, static_cast<size_t>(H) * sizeof(float));
        continue;
      }
      const float* xg = xw + xrow(t, b) * GH;
      const float* hg = hr + b * GH;
      if (d.cell == RecurrentCell::kRnn) {
        for (int64_t j = 0; j < H; ++j) hb[j] = f(xg[j] + hg[j]);
      } else if (gru) {
        for (int64_t j = 0; j < H; ++j) {
          const float z = f(xg[j] + hg[j]);
          float hh;
          if (d.linear_before_reset) {
            const float r = f(xg[H + j] + hg[H + j]);
            hh = g(xg[2 * H + j] + r * (hg[2 * H + j] + (B ? B[GH + 2 * H + j] : 0.f)));
          } else {
            hh = g(xg[2 * H + j] + rhr[b * H + j]);
          }
          hb[j] = (1.f - z) * hh + z * hb[j];
        }
      } else if (lstm) {
        for (int64_t j = 0; j < H; ++j) {
          const float cp = cb[j];
          const float i = f(xg[j] + hg[j] + (Pi ? Pi[j] * cp : 0.f));
          const float fg = d.input_forget ? 1.f - i : f(xg[2 * H + j] + hg[2 * H + j] + (Pf ? Pf[j] * cp : 0.f));
          const float cc = g(xg[3 * H + j] + hg[3 * H + j]);
          const float cn = fg * cp + i * cc;
          const float o = f(xg[H + j] + hg[H + j] + (Po ? Po[j] * cn : 0.f));
          cb[j] = cn;
          // clip bounds gate inputs only, not C_t before h: as onnxruntime (op_cases.py lstm_clip)
          hb[j] = o * apply_activation(d.h, cn);
        }
      }
      if (Y) std::memcpy(Y + y_off(t, b), hb, static_cast<size_t>(H) * sizeof(float));
    }
  }
  for (int64_t b = 0; b < nb; ++b) {
    if (Y_h) std::memcpy(Y_h + state_off(b), h + b * H, static_cast<size_t>(H) * sizeof(float));
    if (Y_c) std::memcpy(Y_c + state_off(b), c + b * H, static_cast<size_t>(H) * sizeof(float));
  }
}

}  // namespace glassbox::kernels
