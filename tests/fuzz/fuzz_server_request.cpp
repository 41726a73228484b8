// libFuzzer target for the server's request handling without sockets or models: arbitrary
// bytes are parsed as an HTTP/1.1 request stream by the same Beast parser and limits the server
// uses; each complete request goes through the path decoding, path templates, the OIP codec
// (JSON + binary framing; a parsed request is encoded back as a response and must re-parse to the
// same tensors) and the TEI/OpenAI body fields. valid_utf8 is checked against nlohmann's own
// UTF-8 validation. Run: build-fuzz/tests/fuzz/fuzz_server_request -max_total_time=300 CORPUS
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "server/codec/json_body.h"
#include "server/codec/oip_codec.h"
#include "server/codec/request_fields.h"

namespace http = boost::beast::http;
using namespace glassbox::server;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

bool is_float(const std::string& t) { return t == "FP16" || t == "BF16" || t == "FP32" || t == "FP64"; }

// A parsed request's tensors encoded as a response (floats binary, the rest JSON), then read
// back as a request ("outputs" renamed "inputs"): every tensor must come back byte for byte.
void round_trip(const InferRequest& in, const OipLimits& limits) {
  std::vector<bool> binary;
  for (const auto& t : in.inputs) {
    // JSON strings must be UTF-8 (the server writes U+FFFD for anything else): such BYTES go binary.
    bool utf8 = true;
    for (const auto& b : t.bytes) utf8 = utf8 && valid_utf8(b);
    binary.push_back(is_float(t.datatype) || (t.datatype == "BYTES" && (!utf8 || t.bytes.size() % 2)));
  }
  auto resp = encode_infer_response("m", "1", in.id, in.parameters, in.inputs, binary);
  check(resp.ok());
  size_t json_len = resp->body.size();
  for (const auto& [k, v] : resp->headers)
    if (k == "Inference-Header-Content-Length") json_len = std::stoull(v);
  auto j = nlohmann::json::parse(resp->body.substr(0, json_len));
  j["inputs"] = j["outputs"];
  j.erase("outputs");
  HttpRequest again;
  again.body = j.dump() + resp->body.substr(json_len);
  again.headers.emplace_back("inference-header-content-length", std::to_string(again.body.size() - (resp->body.size() - json_len)));
  auto back = parse_infer_request(again, limits);
  check(back.ok());
  check(back->inputs.size() == in.inputs.size());
  for (size_t i = 0; i < in.inputs.size(); ++i) {
    const OipTensor &x = in.inputs[i], &y = back->inputs[i];
    check(x.name == y.name && x.datatype == y.datatype && x.shape == y.shape && x.bytes == y.bytes);
    check(x.tensor.nbytes() == y.tensor.nbytes());
    if (x.tensor.nbytes()) check(std::memcmp(x.tensor.raw(), y.tensor.raw(), x.tensor.nbytes()) == 0);
  }
}

void exercise(HttpRequest& req) {
  const auto parts = split_path(req.path);
  check(parts.size() <= req.path.size() + 1);
  for (const char* t : {"/v2/models/{m}/versions/{v}/infer", "/v2/models/{m}", "/embed"}) {
    PathParams params;
    if (match_path(t, parts, &params)) check(!params.values.empty() || std::string_view(t) == "/embed");
  }
  OipLimits limits = oip_limits(ServerOptions{});
  limits.max_elements = 1 << 16;
  auto infer = parse_infer_request(req, limits);
  if (infer.ok()) round_trip(*infer, limits);
  ServerOptions options;
  options.max_texts_per_request = 16;
  auto body = parse_json_body(req.body, 64);
  if (body.ok()) {
    for (const char* field : {"inputs", "input"})
      if (body->contains(field)) (void)parse_texts((*body)[field], field, options);
    for (const char* key : {"model", "encoding_format"}) (void)optional_string(*body, key);
    (void)optional_bool(*body, "truncate");
    (void)optional_int(*body, "top_k");
  }
  // valid_utf8 agrees with nlohmann's strict UTF-8 check on the body.
  bool nlohmann_ok = true;
  try {
    (void)nlohmann::json(req.body).dump();
  } catch (const nlohmann::json::type_error&) {
    nlohmann_ok = false;
  }
  check(valid_utf8(req.body) == nlohmann_ok);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  while (!input.empty()) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(16 << 10);
    parser.body_limit(1 << 20);
    parser.eager(true);
    boost::beast::error_code ec;
    size_t used = 0;
    while (!parser.is_done()) {
      const size_t n = parser.put(boost::asio::buffer(input.data() + used, input.size() - used), ec);
      used += n;
      // need_more with nothing consumed: the rest of the input is an incomplete message.
      if (ec == http::error::need_more && n > 0 && used < input.size()) continue;
      if (ec || n == 0) break;
    }
    if (ec && ec != http::error::need_more) return 0;
    if (!parser.is_done()) return 0;
    auto msg = parser.release();
    HttpRequest req;
    req.method = std::string(msg.method_string());
    const std::string_view target = msg.target();
    const size_t q = target.find('?');
    auto path = percent_decode(target.substr(0, q));
    if (path) {
      check(path->find('\0') == std::string::npos);
      req.path = *path;
      for (const auto& f : msg) {
        std::string name(f.name_string());
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        req.headers.emplace_back(std::move(name), std::string(f.value()));
      }
      req.body = std::move(msg.body());
      exercise(req);
    }
    input.remove_prefix(used);
  }
  return 0;
}
