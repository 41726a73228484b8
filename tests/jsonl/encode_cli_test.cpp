// `glassbox encode` as a process, end to end through the fast JSONL path, against the Hugging Face peer's
// golden encodings (tests/data/generated/tokenizer/*.jsonl, written by scripts/tokenizer/gen_goldens.js with
// npm tokenizers), value for value; and its failure contract on bad lines.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct ProcessResult {
  int exit_code = -1;
  std::string out, err;
};

ProcessResult run_cli(const std::string& args, const std::string& stdin_text) {
  const fs::path dir = fs::temp_directory_path() / ("gb_jsonl_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "in.jsonl", std::ios::binary) << stdin_text;
  const std::string cmd = std::string(GLASSBOX_CLI) + " " + args + " < '" + (dir / "in.jsonl").string() +
                          "' > '" + (dir / "out.jsonl").string() + "' 2> '" + (dir / "err.txt").string() + "'";
  const int st = std::system(cmd.c_str());
  ProcessResult r;
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(dir / "out.jsonl");
  r.err = slurp(dir / "err.txt");
  fs::remove_all(dir);
  return r;
}

std::vector<nlohmann::json> golden(const std::string& name, const std::string& mode) {
  const fs::path p = fs::path(GLASSBOX_SOURCE_DIR) / "tests/data/generated/tokenizer" / (name + ".jsonl");
  std::ifstream f(p);
  EXPECT_TRUE(f.good()) << p << " missing: run scripts/tokenizer/ensure_goldens.sh";
  std::vector<nlohmann::json> out;
  const std::string prefix = "{\"mode\":\"" + mode + "\",";  // gen_goldens.js writes "mode" first
  for (std::string l; std::getline(f, l);) {
    if (l.compare(0, prefix.size(), prefix) != 0) continue;  // parse only this mode's records (ASan is slow)
    auto j = nlohmann::json::parse(l);
    if (j["mode"] == mode) out.push_back(std::move(j));
  }
  return out;
}

// Feeds the golden inputs of one mode through `glassbox encode FLAGS` and compares every field of every line.
void expect_matches_peer(const std::string& name, const std::string& file, const std::string& mode,
                         const std::string& flags) {
  const auto recs = golden(name, mode);
  ASSERT_GT(recs.size(), 10u) << name << " " << mode;
  std::string in;
  for (const auto& r : recs) {
    nlohmann::json line{{"text", r["text"]}};
    if (r.contains("pair")) line["pair"] = r["pair"];
    in += line.dump(-1, ' ', recs.size() % 2 == 0) + "\n";  // one mode ASCII-escaped, one raw UTF-8
  }
  const ProcessResult run = run_cli("encode --tokenizer '" + (fs::path(GLASSBOX_SOURCE_DIR) / file).string() + "' " + flags, in);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream out(run.out);
  std::size_t i = 0;
  for (std::string l; std::getline(out, l); ++i) {
    ASSERT_LT(i, recs.size()) << "more output lines than inputs";
    const auto got = nlohmann::json::parse(l);
    for (const char* k : {"ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask", "overflowing"})
      ASSERT_EQ(got.at(k), recs[i].at(k)) << name << " " << mode << " line " << i + 1 << " field " << k << " text "
                                          << recs[i]["text"].dump().substr(0, 80);
  }
  EXPECT_EQ(i, recs.size());
}

TEST(EncodeCli, MatchesPeerGoldens) {
  expect_matches_peer("roberta-bpe", "tests/data/tokenizer/models/roberta-bpe.json", "default", "");
  expect_matches_peer("roberta-bpe", "tests/data/tokenizer/models/roberta-bpe.json", "pairs", "");
  expect_matches_peer("bert-uncased", "tests/data/tokenizer/models/bert-uncased.json", "overflow",
                      "--max-length 24 --stride 6 --truncation longest_first");
}

TEST(EncodeCli, BadLinesFailNamingTheLineAfterEarlierOutput) {
  const std::string tk = "--tokenizer '" + std::string(GLASSBOX_SOURCE_DIR) + "/tests/data/tokenizer/models/bert-uncased.json'";
  const std::string good = "{\"text\": \"hello world\"}\n";
  for (const std::string bad : {"{\"text\": \"lone \\ud800\"}", "{\"text\": \"cut \xE2\x82\"}", "{\"pair\": \"x\"}",
                                "{\"text\": \"a\", \"pair\": 3}", "not json", " "}) {
    const ProcessResult r = run_cli("encode " + tk + " --batch 1", good + "\n" + bad + "\n" + good);
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_NE(r.err.find("stdin line 3"), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << bad << ": the line before the bad one is written";
  }
  // Lines the fast parser hands to the general one (BOM, other keys, escaped key) still encode.
  const ProcessResult ok = run_cli("encode " + tk, "\xEF\xBB\xBF{\"text\": \"hello\"}\n{\"id\": 1, \"text\": \"hello\"}\n{\"te\\u0078t\": \"hello\"}\n");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  std::istringstream lines(ok.out);
  std::vector<std::string> v;
  for (std::string l; std::getline(lines, l);) v.push_back(l);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], v[1]);
  EXPECT_EQ(v[0], v[2]);
}

// classify/embed read stdin through the same line reader and fast parser (cli/text_inputs.h): JSONL in gives
// what the same texts as arguments give; whitespace-only lines are skipped, other keys go to nlohmann.
TEST(EncodeCli, ClassifyReadsJsonlAsItReadsArguments) {
  const ProcessResult args = run_cli("classify --top-k 2 'Guten Morgen, wie geht es dir?' 'Ho dimenticato le chiavi.'", "");
  ASSERT_EQ(args.exit_code, 0) << args.err;
  const ProcessResult lines = run_cli("classify --top-k 2",
                                      "{\"text\": \"Guten Morgen, wie geht es dir?\"}\n  \t\n"
                                      "{\"id\": 3, \"text\": \"Ho dimenticato le chiavi.\"}");
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  EXPECT_EQ(lines.out, args.out);
  EXPECT_EQ(std::count(args.out.begin(), args.out.end(), '\n'), 2);
}

}  // namespace
