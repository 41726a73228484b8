// Loading a model directory's chat template(s) and rendering them as transformers'
// apply_chat_template does (see include/glassbox/chat_template.h).
#include "glassbox/chat_template.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "chat_template/interpreter.h"

namespace glassbox {

namespace ct = chat_template;
using OJson = nlohmann::ordered_json;

namespace {

struct NamedTemplate {
  std::string text;
  std::shared_ptr<const ct::Body> body;  // null when parsing failed
  std::optional<Error> error;            // the parse error, reported when this template is used
};

constexpr int kMaxJsonDepth = 256;  // messages nested deeper are refused (bounded recursion)

Result<ct::Value> from_json(const OJson& j, const std::string& where, int depth = 0) {
  if (depth > kMaxJsonDepth)
    return make_error(ErrorCode::kLimitExceeded, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                      where);
  switch (j.type()) {
    case OJson::value_t::null: return ct::Value::none();
    case OJson::value_t::boolean: return ct::Value::boolean(j.get<bool>());
    case OJson::value_t::number_integer: return ct::Value::integer(j.get<std::int64_t>());
    case OJson::value_t::number_unsigned: {
      auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX))
        return make_error(ErrorCode::kUnsupported, "integer beyond 64 bits", where);
      return ct::Value::integer(static_cast<std::int64_t>(u));
    }
    case OJson::value_t::number_float: return ct::Value::real(j.get<double>());
    case OJson::value_t::string: return ct::Value::string(j.get<std::string>());
    case OJson::value_t::array: {
      std::vector<ct::Value> items;
      for (std::size_t k = 0; k < j.size(); ++k) {
        GB_ASSIGN_OR_RETURN(auto v, from_json(j[k], where + "[" + std::to_string(k) + "]", depth + 1));
        items.push_back(std::move(v));
      }
      return ct::Value::sequence(std::move(items));
    }
    case OJson::value_t::object: {
      ct::Dict d;
      for (auto it = j.begin(); it != j.end(); ++it) {
        GB_ASSIGN_OR_RETURN(auto v, from_json(it.value(), where + "." + it.key(), depth + 1));
        d.items.emplace_back(ct::Value::string(it.key()), std::move(v));
      }
      return ct::Value::dictionary(std::move(d));
    }
    default: return make_error(ErrorCode::kInvalidArgument, "unsupported JSON value", where);
  }
}

Result<OJson> parse_json(std::string_view text, const std::string& what) {
  OJson j = OJson::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded())
    return make_error(ErrorCode::kInvalidArgument, "not valid JSON (or not valid UTF-8)", what, "fix the JSON");
  return j;
}

// Filters and tests are resolved when the template is loaded, as Jinja2 does when compiling.
Status check_names(const ct::Expr* e) {
  if (!e) return Status();
  if (e->kind == ct::ExprKind::kFilter && !ct::has_filter(e->name))
    return make_error(ErrorCode::kInvalidArgument, "TemplateAssertionError: No filter named '" + e->name + "'.",
                      ct::pos_string(e->pos));
  if (e->kind == ct::ExprKind::kTest && !ct::has_test(e->name))
    return make_error(ErrorCode::kInvalidArgument, "TemplateAssertionError: No test named '" + e->name + "'.",
                      ct::pos_string(e->pos));
  for (const auto& x : e->items) GB_RETURN_IF_ERROR(check_names(x.get()));
  for (const auto& kv : e->kwargs) GB_RETURN_IF_ERROR(check_names(kv.second.get()));
  return Status();
}

Status check_names(const ct::Body& body) {
  for (const auto& n : body) {
    GB_RETURN_IF_ERROR(check_names(n->expr.get()));
    GB_RETURN_IF_ERROR(check_names(n->cond.get()));
    for (const auto& [c, b] : n->branches) {
      GB_RETURN_IF_ERROR(check_names(c.get()));
      GB_RETURN_IF_ERROR(check_names(b));
    }
    for (const auto& p : n->params) GB_RETURN_IF_ERROR(check_names(p.second.get()));
    GB_RETURN_IF_ERROR(check_names(n->body));
    GB_RETURN_IF_ERROR(check_names(n->else_body));
  }
  return Status();
}

NamedTemplate compile(const std::string& name, std::string text) {
  NamedTemplate t;
  t.text = std::move(text);
  auto fail = [&](Error e) {
    t.error = std::move(e).with_where("chat template '" + name + "'");
    return t;
  };
  auto tokens = ct::tokenize(t.text);
  if (!tokens.ok()) return fail(tokens.error());
  auto body = ct::parse(*tokens);
  if (!body.ok()) return fail(body.error());
  auto st = check_names(*body);
  if (!st.ok()) return fail(st.error());
  t.body = std::make_shared<const ct::Body>(std::move(body).value());
  return t;
}

// A special token's text: a string, or an AddedToken object's "content".
std::optional<std::string> token_text(const OJson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return std::nullopt;
}

const char* const kSpecialTokenKeys[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                         "pad_token", "cls_token", "mask_token"};

// transformers' special_tokens_map: the tokens that are set and non-empty.
void collect_special_tokens(const OJson& cfg, std::map<std::string, ct::Value>* out) {
  if (!cfg.is_object()) return;
  for (const char* key : kSpecialTokenKeys) {
    if (!cfg.contains(key)) continue;
    auto t = token_text(cfg[key]);
    if (t && !t->empty()) (*out)[key] = ct::Value::string(*t);
    else out->erase(key);
  }
  if (cfg.contains("additional_special_tokens") && cfg["additional_special_tokens"].is_array()) {
    std::vector<ct::Value> items;
    for (const auto& v : cfg["additional_special_tokens"])
      if (auto t = token_text(v)) items.push_back(ct::Value::string(*t));
    if (items.empty()) out->erase("additional_special_tokens");
    else (*out)["additional_special_tokens"] = ct::Value::sequence(std::move(items));
  }
  if (cfg.contains("extra_special_tokens") && cfg["extra_special_tokens"].is_object())
    for (auto it = cfg["extra_special_tokens"].begin(); it != cfg["extra_special_tokens"].end(); ++it)
      if (auto t = token_text(it.value()); t && !t->empty()) (*out)[it.key()] = ct::Value::string(*t);
}

Result<std::string> read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return make_error(ErrorCode::kIo, "cannot read file", p.string());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

struct ChatTemplate::Impl {
  std::vector<std::pair<std::string, NamedTemplate>> templates;  // in file order
  bool named_list = false;  // the config held a list of named templates (or several .jinja files)
  std::string source;
  std::map<std::string, ct::Value> special_tokens;
};

ChatTemplate::ChatTemplate(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;
ChatTemplate::ChatTemplate(const ChatTemplate&) = default;
ChatTemplate& ChatTemplate::operator=(const ChatTemplate&) = default;
ChatTemplate::~ChatTemplate() = default;

Result<ChatTemplate> ChatTemplate::from_strings(std::string_view tokenizer_config_json,
                                                std::optional<std::string> chat_template_jinja,
                                                std::string_view special_tokens_map_json) {
  auto impl = std::make_shared<Impl>();
  OJson cfg = OJson::object();
  if (!tokenizer_config_json.empty()) {
    GB_ASSIGN_OR_RETURN(cfg, parse_json(tokenizer_config_json, "tokenizer_config.json"));
    if (!cfg.is_object())
      return make_error(ErrorCode::kInvalidModel, "expected a JSON object", "tokenizer_config.json");
  }
  collect_special_tokens(cfg, &impl->special_tokens);
  if (!special_tokens_map_json.empty()) {
    GB_ASSIGN_OR_RETURN(auto stm, parse_json(special_tokens_map_json, "special_tokens_map.json"));
    collect_special_tokens(stm, &impl->special_tokens);
  }
  if (chat_template_jinja) {
    impl->source = "chat_template.jinja";
    impl->templates.emplace_back("default", compile("default", *chat_template_jinja));
  } else if (cfg.contains("chat_template") && !cfg["chat_template"].is_null()) {
    impl->source = "tokenizer_config.json";
    const OJson& t = cfg["chat_template"];
    if (t.is_string()) {
      impl->templates.emplace_back("default", compile("default", t.get<std::string>()));
    } else if (t.is_array()) {
      impl->named_list = true;
      for (std::size_t k = 0; k < t.size(); ++k) {
        const OJson& item = t[k];
        if (!item.is_object() || !item.contains("name") || !item["name"].is_string() || !item.contains("template") ||
            !item["template"].is_string())
          return make_error(ErrorCode::kInvalidModel, "expected {\"name\": str, \"template\": str}",
                            "tokenizer_config.json: chat_template[" + std::to_string(k) + "]");
        std::string name = item["name"].get<std::string>();
        impl->templates.emplace_back(name, compile(name, item["template"].get<std::string>()));
      }
    } else {
      return make_error(ErrorCode::kInvalidModel, "chat_template must be a string or a list of named templates",
                        "tokenizer_config.json: chat_template");
    }
  }
  if (impl->templates.empty())
    return make_error(ErrorCode::kNotFound, "the model has no chat template",
                      "tokenizer_config.json (no 'chat_template') / chat_template.jinja",
                      "add the model's own chat template; glassbox never substitutes a generic (ChatML) template");
  return ChatTemplate(std::move(impl));
}

Result<ChatTemplate> ChatTemplate::from_model_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  fs::path root(dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return make_error(ErrorCode::kNotFound, "not a directory", dir, "pass the model directory");
  std::string cfg, stm;
  std::optional<std::string> jinja;
  if (fs::exists(root / "tokenizer_config.json", ec)) {
    GB_ASSIGN_OR_RETURN(cfg, read_file(root / "tokenizer_config.json"));
  }
  if (fs::exists(root / "special_tokens_map.json", ec)) {
    GB_ASSIGN_OR_RETURN(stm, read_file(root / "special_tokens_map.json"));
  }
  if (fs::exists(root / "chat_template.jinja", ec)) {
    GB_ASSIGN_OR_RETURN(auto text, read_file(root / "chat_template.jinja"));
    jinja = std::move(text);
  }
  auto r = from_strings(cfg, jinja, stm);
  if (!r.ok()) return std::move(r).take_error().with_where(dir);
  fs::path extra = root / "additional_chat_templates";
  if (jinja && fs::is_directory(extra, ec)) {
    auto impl = std::make_shared<Impl>(*r->impl_);
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(extra, ec))
      if (e.path().extension() == ".jinja") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      GB_ASSIGN_OR_RETURN(auto text, read_file(f));
      std::string name = f.stem().string();
      impl->templates.emplace_back(name, compile(name, std::move(text)));
    }
    impl->named_list = impl->templates.size() > 1;
    return ChatTemplate(std::move(impl));
  }
  return r;
}

Result<std::string> ChatTemplate::resolve_name(const ChatTemplateOptions& options) const {
  auto has = [&](const std::string& n) {
    for (const auto& t : impl_->templates)
      if (t.first == n) return true;
    return false;
  };
  if (!impl_->named_list) {
    if (!options.template_name.empty() && options.template_name != "default")
      return make_error(ErrorCode::kNotFound, "no chat template named '" + options.template_name + "'",
                        impl_->source, "the model has a single template (\"default\")");
    return std::string("default");
  }
  if (!options.template_name.empty()) {
    if (has(options.template_name)) return options.template_name;
  } else if (options.tools_json && has("tool_use")) {
    return std::string("tool_use");
  } else if (has("default")) {
    return std::string("default");
  }
  std::string names;
  for (const auto& n : template_names()) names += (names.empty() ? "" : ", ") + n;
  return make_error(ErrorCode::kNotFound,
                    options.template_name.empty() ? "the model has several chat templates and none is named 'default'"
                                                  : "no chat template named '" + options.template_name + "'",
                    impl_->source, "pass a template name; available: " + names);
}

std::vector<std::string> ChatTemplate::template_names() const {
  std::vector<std::string> out;
  for (const auto& t : impl_->templates) out.push_back(t.first);
  return out;
}

const std::string& ChatTemplate::source() const { return impl_->source; }

std::vector<std::pair<std::string, std::string>> ChatTemplate::special_tokens() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : impl_->special_tokens)
    if (v.is_string()) out.emplace_back(k, v.s);
  return out;
}

Result<std::string> ChatTemplate::render(std::string_view messages_json, const ChatTemplateOptions& options) const {
  GB_ASSIGN_OR_RETURN(auto name, resolve_name(options));
  const NamedTemplate* t = nullptr;
  for (const auto& kv : impl_->templates)
    if (kv.first == name) t = &kv.second;
  if (t->error) return *t->error;
  GB_ASSIGN_OR_RETURN(auto mj, parse_json(messages_json, "messages"));
  if (!mj.is_array()) return make_error(ErrorCode::kInvalidArgument, "messages must be a JSON array", "messages");
  ct::Dict context;
  for (const auto& [k, v] : impl_->special_tokens) context.set(ct::Value::string(k), v);
  if (!options.extra_context_json.empty()) {
    GB_ASSIGN_OR_RETURN(auto extra, parse_json(options.extra_context_json, "extra template variables"));
    if (!extra.is_object())
      return make_error(ErrorCode::kInvalidArgument, "must be a JSON object", "extra template variables");
    for (auto it = extra.begin(); it != extra.end(); ++it) {
      const std::string& key = it.key();
      if (key == "messages" || key == "tools" || key == "documents" || key == "add_generation_prompt")
        return make_error(ErrorCode::kInvalidArgument, "'" + key + "' is set by its own option",
                          "extra template variables", "pass it through its own option");
      GB_ASSIGN_OR_RETURN(auto v, from_json(it.value(), key));
      context.set(ct::Value::string(key), std::move(v));
    }
  }
  GB_ASSIGN_OR_RETURN(auto messages, from_json(mj, "messages"));
  context.set(ct::Value::string("messages"), std::move(messages));
  ct::Value tools = ct::Value::none();
  if (options.tools_json) {
    GB_ASSIGN_OR_RETURN(auto tj, parse_json(*options.tools_json, "tools"));
    if (!tj.is_array()) return make_error(ErrorCode::kInvalidArgument, "tools must be a JSON array", "tools");
    for (std::size_t k = 0; k < tj.size(); ++k)
      if (!tj[k].is_object())
        return make_error(ErrorCode::kInvalidArgument, "each tool must be a JSON object (a JSON schema)",
                          "tools[" + std::to_string(k) + "]");
    GB_ASSIGN_OR_RETURN(tools, from_json(tj, "tools"));
  }
  context.set(ct::Value::string("tools"), std::move(tools));
  context.set(ct::Value::string("documents"), ct::Value::none());
  context.set(ct::Value::string("add_generation_prompt"), ct::Value::boolean(options.add_generation_prompt));
  ct::Clock clock;
  clock.fixed = options.now_unix_micros.has_value();
  clock.unix_micros = options.now_unix_micros.value_or(0);
  clock.local_time_zone = options.time_zone == TemplateTimeZone::kLocal;
  ct::Interpreter interp(clock, ct::RenderLimits{});
  auto out = interp.render(*t->body, context);
  if (!out.ok()) return std::move(out).take_error().with_where("chat template '" + name + "'");
  return out;
}

}  // namespace glassbox
