#include "diag/accuracy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "diag/diff.h"
#include "diag/inputs.h"
#include "generation/decoder_layout.h"
#include "glassbox/pipeline.h"
#include "pipeline/model_dir.h"

namespace glassbox::diag {
namespace {

struct Sums {
  double max_diff = 0, max_ref = 0, sum_diff = 0, sum_ref = 0, dot = 0, norm_a = 0, norm_b = 0;
  bool comparable = true;
};

// Element sums of two float32 tensors of one shape; other dtypes compare bytes.
Sums sums_of(const Tensor& a, const Tensor& b) {
  Sums s;
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    s.comparable = false;
    return s;
  }
  if (a.dtype() != DataType::kFloat32) {
    s.comparable = a.nbytes() == b.nbytes() && (a.nbytes() == 0 || std::equal(static_cast<const char*>(a.raw()),
                                                                            static_cast<const char*>(a.raw()) + a.nbytes(),
                                                                            static_cast<const char*>(b.raw())));
    return s;
  }
  const ElementStats e = element_stats(a, b);  // diff's loop (bench.h)
  s.comparable = e.undefined == 0;  // a NaN anywhere: the outputs cannot be compared
  s.max_diff = e.max_abs;
  s.max_ref = e.max_ref;
  s.sum_diff = e.sum_abs;
  s.sum_ref = e.sum_ref;
  s.dot = e.dot;
  s.norm_a = e.norm_a;
  s.norm_b = e.norm_b;
  return s;
}

// max |b - a| / max |a|; 0 when both are all zero, infinity when only the reference is.
double normwise(const Sums& s) {
  if (!s.comparable) return INFINITY;
  if (s.max_ref == 0) return s.max_diff == 0 ? 0 : INFINITY;
  return s.max_diff / s.max_ref;
}

double cosine_of(const Sums& s) {
  if (!s.comparable) return 0;
  if (s.norm_a == 0 && s.norm_b == 0) return 1;
  if (s.norm_a == 0 || s.norm_b == 0) return 0;
  return s.dot / std::sqrt(s.norm_a * s.norm_b);
}

bool looks_like_logits(const std::string& name, const Tensor& t) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("logits") != std::string::npos && t.dtype() == DataType::kFloat32 && t.rank() >= 1 &&
         t.shape().back() >= 2;
}

// First node whose output differs at all, and first beyond the tolerance (run A's order).
void find_departures(const Capture& a, const Capture& b, double tolerance, AccuracyReport& r) {
  for (const auto& p : a.order) {
    auto it = b.tensors.find(p.tensor);
    if (it == b.tensors.end()) continue;
    const double rel = normwise(sums_of(a.tensors.at(p.tensor), it->second));
    if (rel > 0 && !r.first_difference.found) r.first_difference = {true, p.node, p.op_type, p.tensor, rel};
    if (rel > tolerance && !r.first_departure.found) r.first_departure = {true, p.node, p.op_type, p.tensor, rel};
  }
}

Result<Session> load_session(const std::string& path, SessionOptions o, Precision p) {
  o.precision = p;
  return Session::load(path, o);
}

// Model inputs of one text as the pipeline encodes it (input_ids, attention_mask, token_type_ids).
Result<std::vector<NamedTensor>> text_inputs(const Pipeline& p, const Session& s, const std::string& text) {
  GB_ASSIGN_OR_RETURN(EncodedText enc, p.encode({text, std::nullopt}));
  const Encoding& e = enc.encoding;
  const int64_t n = static_cast<int64_t>(e.ids.size());
  std::vector<NamedTensor> out;
  for (const auto& spec : s.inputs()) {
    const std::vector<uint32_t>* src = spec.name == "input_ids"        ? &e.ids
                                       : spec.name == "attention_mask" ? &e.attention_mask
                                       : spec.name == "token_type_ids" ? &e.type_ids
                                                                       : nullptr;
    if (!src || spec.dtype != DataType::kInt64)
      return make_error(ErrorCode::kUnsupported, "cannot build model input '" + spec.to_string() + "' from a text",
                        {}, "the first-departure search knows input_ids, attention_mask, token_type_ids (int64)");
    GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kInt64, {1, n}));
    int64_t* d = t.mutable_data<int64_t>();
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<int64_t>((*src)[static_cast<size_t>(i)]);
    out.push_back({spec.name, std::move(t)});
  }
  return out;
}

Status departures(Session& a, Session& b, const std::vector<NamedTensor>& inputs, AccuracyReport& r) {
  GB_ASSIGN_OR_RETURN(Capture ca, capture_run(a, inputs));
  GB_ASSIGN_OR_RETURN(Capture cb, capture_run(b, inputs));
  find_departures(ca, cb, r.thresholds.node_tolerance, r);
  return {};
}

Result<Tensor> row_tensor(const std::vector<float>& v) {
  GB_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(DataType::kFloat32, {1, static_cast<int64_t>(v.size())}));
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
}

Status measure_texts(const AccuracyRequest& q, AccuracyReport& r) {
  if (q.texts.empty())
    return make_error(ErrorCode::kInvalidArgument, "no texts to compare", q.model,
                      "give --texts FILE (one text per line, or JSONL {\"text\": ...}) with texts like your own");
  PipelineOptions po;
  po.session = q.session;
  po.precision = Precision::kFp32;
  GB_ASSIGN_OR_RETURN(Pipeline ref, Pipeline::load(q.model, po));
  po.precision = q.candidate;
  GB_ASSIGN_OR_RETURN(Pipeline cand, Pipeline::load(q.model, po));
  list_lower_precision_ops(cand.session(), r);
  const bool classify = ref.decisions().task == PipelineTask::kClassify;
  OutputAccuracy o;
  o.name = classify ? "logits" : "embedding";
  o.classifier = classify;
  const size_t batch = static_cast<size_t>(std::max<int64_t>(1, ref.decisions().batch_size));
  for (size_t start = 0; start < q.texts.size(); start += batch) {
    std::vector<PipelineInput> chunk;
    for (size_t i = start; i < std::min(q.texts.size(), start + batch); ++i) chunk.push_back({q.texts[i], std::nullopt});
    std::vector<std::vector<float>> va, vb;
    if (classify) {
      GB_ASSIGN_OR_RETURN(auto ca, ref.classify(chunk, 1));
      GB_ASSIGN_OR_RETURN(auto cb, cand.classify(chunk, 1));
      for (size_t i = 0; i < ca.size(); ++i) {
        va.push_back(ca[i].logits);
        vb.push_back(cb[i].logits);
      }
    } else {
      GB_ASSIGN_OR_RETURN(auto ea, ref.embed(chunk));
      GB_ASSIGN_OR_RETURN(auto eb, cand.embed(chunk));
      for (size_t i = 0; i < ea.size(); ++i) {
        va.push_back(ea[i].vector);
        vb.push_back(eb[i].vector);
      }
    }
    for (size_t i = 0; i < va.size(); ++i) {
      GB_ASSIGN_OR_RETURN(Tensor ta, row_tensor(va[i]));
      GB_ASSIGN_OR_RETURN(Tensor tb, row_tensor(vb[i]));
      accumulate_output(o, ta, tb, static_cast<int64_t>(start + i));
    }
  }
  r.outputs.push_back(std::move(o));
  GB_ASSIGN_OR_RETURN(auto files, pipeline::read_model_dir(q.model));
  GB_ASSIGN_OR_RETURN(Session sa, load_session(files.model_path, ref.session().options(), Precision::kFp32));
  GB_ASSIGN_OR_RETURN(Session sb, load_session(files.model_path, ref.session().options(), q.candidate));
  GB_ASSIGN_OR_RETURN(auto inputs, text_inputs(ref, sa, q.texts.front()));
  return departures(sa, sb, inputs, r);
}

Status measure_tensors(const AccuracyRequest& q, AccuracyReport& r) {
  GB_ASSIGN_OR_RETURN(Session sa, load_session(q.model, q.session, Precision::kFp32));
  GB_ASSIGN_OR_RETURN(Session sb, load_session(q.model, q.session, q.candidate));
  list_lower_precision_ops(sb, r);
  const int64_t samples = q.input_args.empty() ? std::max<int64_t>(1, q.samples) : 1;
  std::vector<NamedTensor> first;
  for (int64_t i = 0; i < samples; ++i) {
    std::vector<InputOrigin> origins;
    GB_ASSIGN_OR_RETURN(auto inputs, prepare_inputs(sa, q.input_args, q.shape_args, q.seed + static_cast<uint64_t>(i), &origins));
    if (i == 0) {
      r.inputs = std::to_string(samples) + " input set(s):";
      for (const auto& o : origins) r.inputs += " " + o.name + "=" + o.source + shape_to_string(o.shape);
      if (q.input_args.empty()) r.inputs += std::string(" seeds ") + std::to_string(q.seed) + ".." + std::to_string(q.seed + samples - 1);
      first = inputs;
    }
    GB_ASSIGN_OR_RETURN(auto oa, sa.run(inputs));
    GB_ASSIGN_OR_RETURN(auto ob, sb.run(inputs));
    if (r.outputs.empty())
      for (const auto& o : oa) {
        OutputAccuracy row;
        row.name = o.name;
        row.classifier = looks_like_logits(o.name, o.tensor);
        r.outputs.push_back(std::move(row));
      }
    for (size_t k = 0; k < oa.size() && k < ob.size(); ++k) accumulate_output(r.outputs[k], oa[k].tensor, ob[k].tensor, i);
  }
  return departures(sa, sb, first, r);
}

// Cosines near 1 need their digits: 0.999994, not 1.
std::string cos_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

}  // namespace

double normwise_error(const Tensor& a, const Tensor& b) { return normwise(sums_of(a, b)); }

std::string num(double v) {
  if (std::isinf(v)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

void list_lower_precision_ops(const Session& s, AccuracyReport& r) {
  for (const auto& d : s.op_decisions())
    if (d.decision.rfind(r.candidate + ":", 0) == 0) r.lower_precision_ops.push_back(d.node + " (" + d.op_type + ")");
}


void accumulate_output(OutputAccuracy& o, const Tensor& a, const Tensor& b, int64_t input_index) {
  const Sums s = sums_of(a, b);
  o.inputs++;
  o.max_rel_error = std::max(o.max_rel_error, normwise(s));
  o.sum_abs_diff += s.comparable ? s.sum_diff : INFINITY;
  o.sum_abs_ref += s.sum_ref;
  const double c = cosine_of(s);
  o.min_cosine = std::min(o.min_cosine, c);
  o.sum_cosine += c;
  if (!o.classifier || !s.comparable || a.dtype() != DataType::kFloat32 || a.rank() < 1) return;
  const int64_t n = a.shape().back();
  if (n <= 0) return;
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  for (int64_t row = 0; row < a.numel() / n; ++row) {
    const float* ra = pa + row * n;
    const float* rb = pb + row * n;
    const bool same = std::max_element(ra, ra + n) - ra == std::max_element(rb, rb + n) - rb;
    o.top1_rows++;
    if (same) o.top1_agree++;
    else if (o.flipped.size() < 20) o.flipped.push_back(input_index);
  }
}

void finish_report(AccuracyReport& r) {
  const auto& t = r.thresholds;
  for (auto& o : r.outputs) {
    o.mean_rel_error = o.sum_abs_ref > 0 ? o.sum_abs_diff / o.sum_abs_ref : (o.sum_abs_diff > 0 ? INFINITY : 0);
    o.mean_cosine = o.inputs ? o.sum_cosine / static_cast<double>(o.inputs) : 1;
    const std::string what = "output '" + o.name + "': ";
    if (!(o.max_rel_error <= t.max_rel_error))
      r.failures.push_back(what + "max relative error " + num(o.max_rel_error) + " > " + num(t.max_rel_error));
    if (o.classifier && o.top1_rows > 0 &&
        static_cast<double>(o.top1_agree) / static_cast<double>(o.top1_rows) < t.min_top1_agreement)
      r.failures.push_back(what + "top-1 agreement " + std::to_string(o.top1_agree) + "/" + std::to_string(o.top1_rows) +
                           " < " + num(t.min_top1_agreement));
    if (!o.classifier && !(o.min_cosine >= t.min_cosine))
      r.failures.push_back(what + "cosine similarity " + num(o.min_cosine) + " < " + num(t.min_cosine));
  }
}

Result<AccuracyReport> measure_accuracy(const AccuracyRequest& q) {
  if (q.candidate == Precision::kFp32)
    return make_error(ErrorCode::kInvalidArgument, "the candidate precision is fp32, the reference itself", {},
                      "use --precision bf16 or int8-dynamic");
  AccuracyReport r;
  r.model = q.model;
  r.candidate = precision_name(q.candidate);
  r.thresholds = q.thresholds;
  std::error_code ec;
  if (std::filesystem::is_directory(q.model, ec) && generation::is_generation_model_dir(q.model)) {
    r.inputs = std::to_string(q.texts.size()) + " prompts, " + std::to_string(q.steps) + " greedy steps each";
    GB_RETURN_IF_ERROR(measure_generation_accuracy(q, r));
    return r;  // its thresholds are checked per step (measure_generation_accuracy)
  } else if (std::filesystem::is_directory(q.model, ec)) {
    r.inputs = std::to_string(q.texts.size()) + " texts";
    GB_RETURN_IF_ERROR(measure_texts(q, r));
  } else {
    GB_RETURN_IF_ERROR(measure_tensors(q, r));
  }
  finish_report(r);
  return r;
}

std::string accuracy_to_text(const AccuracyReport& r) {
  std::ostringstream s;
  s << "accuracy of " << r.candidate << " against " << r.reference << ": " << r.model << "\n"
    << "inputs: " << r.inputs << "\n"
    << "ops in " << r.candidate << ": " << r.lower_precision_ops.size();
  for (size_t i = 0; i < r.lower_precision_ops.size() && i < 3; ++i) s << (i ? ", " : " (") << r.lower_precision_ops[i];
  s << (r.lower_precision_ops.size() > 3 ? ", ...)" : r.lower_precision_ops.empty() ? "" : ")") << "; everything else ran in fp32\n";
  for (const auto& g : r.generation) {
    double worst = 0;
    for (double e : g.rel_error) worst = std::max(worst, e);
    s << "prompt \"" << g.prompt << "\": greedy tokens agree on " << g.agreed << " of " << g.steps << " steps";
    if (g.agreed < g.steps) s << " (they part at step " << g.agreed << ")";
    s << "; logits max rel error " << num(worst) << " over " << g.rel_error.size() << " compared steps\n";
  }
  for (const auto& o : r.outputs) {
    s << "output '" << o.name << "' (" << o.inputs << " inputs): max rel error " << num(o.max_rel_error)
      << ", mean rel error " << num(o.mean_rel_error) << ", cosine min " << cos_text(o.min_cosine) << " mean "
      << cos_text(o.mean_cosine);
    if (o.classifier) {
      s << ", top-1 agreement " << o.top1_agree << "/" << o.top1_rows;
      if (!o.flipped.empty()) {
        s << " (flipped inputs:";
        for (auto i : o.flipped) s << " " << i;
        s << ")";
      }
    }
    s << "\n";
  }
  auto dep = [&](const char* label, const NodeDeparture& d) {
    s << label;
    if (d.found) s << "node '" << d.node << "' (" << d.op_type << "), tensor '" << d.tensor << "', rel error " << num(d.rel_error) << "\n";
    else s << "none\n";
  };
  if (!r.generation.empty()) {  // decoders: the comparison is per generated step, not per node
    s << "thresholds: logits max rel error <= " << num(r.thresholds.max_rel_error) << " at every compared step, greedy "
      << "token agreement >= " << num(r.thresholds.min_token_agreement) << "\n";
  } else {
    dep("first node that differs (first input): ", r.first_difference);
    s << "first node beyond " << num(r.thresholds.node_tolerance) << ": ";
    dep("", r.first_departure);
    s << "thresholds: max rel error <= " << num(r.thresholds.max_rel_error) << ", top-1 agreement >= "
      << num(r.thresholds.min_top1_agreement) << " (classifiers), cosine >= " << num(r.thresholds.min_cosine)
      << " (other outputs)\n";
  }
  if (r.failures.empty()) {
    s << "PASS: " << r.candidate << " is within every threshold on these inputs\n";
  } else {
    for (const auto& f : r.failures) s << "FAIL: " << f << "\n";
  }
  return s.str();
}

nlohmann::ordered_json accuracy_to_json(const AccuracyReport& r) {
  auto numj = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json("inf"); };
  nlohmann::ordered_json j;
  j["schema"] = "glassbox.accuracy/1";
  j["model"] = r.model;
  j["reference"] = r.reference;
  j["candidate"] = r.candidate;
  j["inputs"] = r.inputs;
  j["thresholds"] = {{"max_rel_error", r.thresholds.max_rel_error}, {"min_top1_agreement", r.thresholds.min_top1_agreement},
                     {"min_cosine", r.thresholds.min_cosine}, {"node_tolerance", r.thresholds.node_tolerance},
                     {"min_token_agreement", r.thresholds.min_token_agreement}};
  j["lower_precision_ops"] = r.lower_precision_ops;
  auto outs = nlohmann::ordered_json::array();
  for (const auto& o : r.outputs) {
    nlohmann::ordered_json e{{"name", o.name}, {"inputs", o.inputs}, {"max_rel_error", numj(o.max_rel_error)},
                             {"mean_rel_error", numj(o.mean_rel_error)}, {"min_cosine", numj(o.min_cosine)},
                             {"mean_cosine", numj(o.mean_cosine)}};
    if (o.classifier) e["top1"] = {{"agree", o.top1_agree}, {"rows", o.top1_rows}, {"flipped_inputs", o.flipped}};
    outs.push_back(e);
  }
  j["outputs"] = outs;
  if (!r.generation.empty()) {
    auto gen = nlohmann::ordered_json::array();
    for (const auto& g : r.generation) {
      auto errs = nlohmann::ordered_json::array();
      for (double e : g.rel_error) errs.push_back(numj(e));
      gen.push_back({{"prompt", g.prompt}, {"steps", g.steps}, {"agreed_steps", g.agreed}, {"rel_error_per_step", errs}});
    }
    j["generation"] = {{"steps_requested", r.generation_steps}, {"prompts", gen}};
  }
  auto dep = [&](const NodeDeparture& d) {
    return d.found ? nlohmann::ordered_json{{"node", d.node}, {"op_type", d.op_type}, {"tensor", d.tensor}, {"rel_error", numj(d.rel_error)}}
                   : nlohmann::ordered_json(nullptr);
  };
  j["first_difference"] = dep(r.first_difference);
  j["first_departure"] = dep(r.first_departure);
  j["failures"] = r.failures;
  j["pass"] = r.failures.empty();
  return j;
}

}  // namespace glassbox::diag
