// The routes of a model with glassbox.json "heads" (embed_request.h): which route serves which head, the
// refusal of a head the model does not declare, and a heads job's answer read per head.
#include <algorithm>

#include "glassbox/embedding_heads.h"
#include "server/repository/loaded_model.h"
#include "server/routes/embed_request.h"
#include "server/scheduler/scheduler.h"

namespace glassbox::server {
namespace {

// The route that gives each head (OIP infer gives every declared head, docs/retrieval.md).
const char* route_of(const std::string& head) {
  if (head == "dense") return "/embed";
  if (head == "sparse") return "/embed_sparse";
  return "/embed_multi";
}

}  // namespace

std::optional<Refusal> refuse_undeclared_head(const LoadedModel& m, const std::string& head) {
  const EmbeddingHeads* heads = m.pipeline ? embedding_heads(*m.pipeline) : nullptr;
  if (!heads) return std::nullopt;
  const auto names = head_names(*heads);
  if (std::find(names.begin(), names.end(), head) != names.end()) return std::nullopt;
  std::string declared, served;
  for (const auto& n : names) {
    declared += (declared.empty() ? "" : ", ") + n;
    served += (served.empty() ? "" : ", ") + std::string(route_of(n)) + " (" + n + ")";
  }
  return Refusal(RefusalCode::kInvalidRequest,
                 "model '" + m.name + "' declares the heads " + declared + " (glassbox.json \"heads\") and no " + head +
                     " head: its heads are served by " + served + " and OIP infer (every declared head)",
                 "model");
}

Status take_head(TextResults& r, const std::string& head) {
  r.embeddings.clear();
  for (auto& h : r.heads) {
    auto& e = head == "dense" ? h.dense : head == "sparse" ? h.sparse : h.multi_vector;
    if (!e) return make_error(ErrorCode::kInternal, "the run gave no " + head + " head", "heads job");
    r.embeddings.push_back(std::move(*e));
  }
  r.heads.clear();
  return {};
}

}  // namespace glassbox::server
