// glassbox's inference session: load an ONNX model, optimize it with named
// passes, plan memory per input-shape signature, execute node by node on a
// fixed thread pool, and let an observer see every node.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/kv_cache.h"
#include "glassbox/precision.h"
#include "glassbox/tensor.h"
#include "glassbox/value.h"

namespace glassbox {

// Number of physical CPU cores (hyperthread siblings counted once); >= 1.
int physical_core_count();

// Precision (the arithmetic of GEMMs on constant weights): glassbox/precision.h.

// How the session's idle pool threads wait for the next op's work during a run
// (SessionOptions::pool_wait; docs/runtime.md "Pool waiting").
enum class PoolWait { kAuto, kSpin, kSleep };
const char* pool_wait_name(PoolWait w);  // "auto", "spin", "sleep"
// "auto" | "spin" | "sleep" (kInvalidArgument naming the choices otherwise).
Result<PoolWait> parse_pool_wait(const std::string& text);

// An input's name and dims (SessionOptions::max_input_shapes).
struct NamedShape {
  std::string name;
  std::vector<int64_t> dims;
};

// Every setting of a Session. Each field: default, then why.
struct SessionOptions {
  // Intra-op threads. 0 = physical_core_count(): hyperthread siblings share the FPUs
  // that GEMM and elementwise kernels saturate, so more threads only add contention.
  int threads = 0;
  // 0 = run the graph exactly as written; 1 = identity removal, dead-node elimination,
  // constant folding; 2 = 1 + shape-subgraph folding once input shapes are known.
  // Default 2: every pass is checked against level 0 by the test suite.
  int opt_level = 2;
  // Passes to skip by name (see graph_pass_names()), e.g. {"constant_folding"}:
  // lets a user bisect a wrong result to one rewrite.
  std::vector<std::string> disabled_passes;
  // Bytes the tensors of one run may occupy at once (outputs, intermediates, scratch).
  // 16 GiB: above BERT-large at batch 32 (~4 GiB), far below shape bombs (10^12 elements).
  int64_t memory_limit_bytes = int64_t{16} << 30;
  // Constant folding only materializes results up to this many bytes each: folding
  // a huge ConstantOfShape would trade a cheap node for resident memory.
  int64_t max_folded_constant_bytes = int64_t{1} << 20;
  // Distinct input-shape signatures whose optimized graph + memory plan are kept.
  // 64: every length of a 512-position text model rounded to 8 (pipelines round so) keeps
  // its plan; older plans are evicted (LRU). A plan is a graph copy and offsets, no tensors.
  int plan_cache_size = 64;
  // Use a static memory plan (one arena per run, offsets from tensor lifetimes) once a
  // shape signature has run once; false = every tensor is its own heap allocation.
  bool use_memory_plan = true;
  // Arenas kept between runs for reuse (with use_memory_plan): 2 = one per sequence the two
  // pool threads of an unpadded batch run at once. A new arena per run pays a page fault and a
  // zeroing per page, ~40 % of a BERT-base request; kept arenas stay resident (largest runs').
  int kept_arenas = 2;
  // Print each pass's changes to stderr when loading (the changes are always kept in
  // Session::pass_log()); off by default so `run` output stays clean.
  bool log_passes = false;
  // Initializers over 16 KiB are views of the mapped model file, not copies, and weights
  // packed for GEMM release their mapped pages (graph::LoadOptions::map_initializers);
  // false copies every payload into memory (the pre-mapping behaviour, for comparison).
  bool map_initializers = true;
  // fp32: results match the exported model's arithmetic (what the tests compare against
  // onnxruntime); bf16 and int8-dynamic trade accuracy for speed and must be chosen, with
  // evidence from `glassbox accuracy`. See Precision.
  Precision precision = Precision::kFp32;
  // Packed-weights cache directory; "" = off. When set, the weights packed for GEMM (fp32
  // blocked, bf16, int8) are written there after the first run, one file per model and
  // precision, and later loads map that file read-only instead of packing again (a stale,
  // truncated or corrupt file is detected and rebuilt; see docs/runtime.md). Off by default:
  // it writes hundreds of MB to a place only the user can choose.
  std::string weights_cache;
  // How idle pool threads wait for the next op during a run. auto: poll up to 200 us (a
  // kernel wake-up costs tens of us, an encoder run issues ~100-250 parallel ops back to
  // back) only while the machine has an idle core and no spinner was just preempted, else
  // sleep at once; spin: poll up to 200 us whatever the load; sleep: never poll. No mode
  // spins between runs. Default auto: the spin's gain on a quiet machine without its loss
  // (a spinner taking the core a descheduled thread needs) on a loaded one.
  PoolWait pool_wait = PoolWait::kAuto;
  // Memory budget in bytes (docs/memory.md); 0 = off: the right figure is the machine's and the deployment's,
  // not ours (without one, a shape the machine cannot hold ends in the OOM killer, not an Error). With it, load
  // refuses (kLimitExceeded, naming every number) a model whose max_memory_reserved + weights exceed it, and,
  // with max_input_shapes, one whose reserved + weights + the run tensors of that shape do; every run's tensors
  // are then limited to what reserved + weights leave (memory_limit_bytes lowered to it): a run whose shapes would
  // exceed the budget is refused at the allocation that would cross it, before that allocation is made.
  int64_t max_memory = 0;
  // Bytes of max_memory already taken outside this session, counted first: the process, a tokenizer, a KV-cache
  // reservation (the pipelines and the server fill it with their measured or declared figures). 0: nothing else.
  int64_t max_memory_reserved = 0;
  // The declared largest input shapes, dry-run at load under max_memory, twice (the first run plans the shape,
  // the second runs on its arena), on zero-filled inputs: every input needs a shape here. Empty: load checks
  // reserved + weights only; Session::check_memory dry-runs inputs the caller chose (a pipeline's text).
  std::vector<NamedShape> max_input_shapes;
  // Outputs computed for the last position only (graph pass last_position_outputs): an output [batch, sequence, N]
  // made by a MatMul [+ per-position element-wise ops with constants] becomes [batch, 1, N], the values it had at
  // position sequence - 1 (any other chain stays whole; the pass log says why). Empty: every output as the model
  // declares it. The generation session names "logits": sampling reads each sequence's last position only, and the
  // LM head over every prompt token was most of a prefill's work (a vocabulary of 150k x hidden per token).
  std::vector<std::string> last_position_outputs;
  // Symbolic input dims that plans do not specialize on: the plan cache keys such a dim as "any size" and the
  // shape-specialization passes leave it symbolic, so one plan (graph, compiled ops, memory plan) serves every
  // size of it; its memory plan grows when a run outgrows it (the grown slots doubled, so a dim that grows one by
  // one re-plans its memory log2 times, never per size). Empty: each run's sizes bind every symbol (a plan per
  // distinct shape signature). The generation session names its past-length symbols (the past key/values'
  // sequence dim, attention_mask's length): a decode step's past is one longer than the last step's, and a new
  // plan per step was most of a decode step's time. "*" names every symbolic input dim: the text pipelines'
  // default (a new text length or batch size re-planned cost 1.14x a warm run, BERT-base, bench_first_seen). A
  // dynamic dim without a name (no dim_param) stays specialized.
  std::vector<std::string> unspecialized_symbols;
  // Past key/value inputs whose cache the caller keeps and binds to each run (Session::run_bound): the graph
  // pass kv_cache_binding rewrites each Concat(past, new) -> present feeding a DecoderAttention so the
  // attention reads the caller's cache in place and appends the new positions to it; those present outputs
  // leave the graph. All or none: when one named input does not fit the pattern, nothing is rewritten (the pass
  // log says why) and kv_cache_bound() is false. Empty: past inputs are ordinary inputs. The generation session
  // names its past inputs on the Optimum layout.
  std::vector<std::string> kv_cache_inputs;
};

// A session's memory account under SessionOptions::max_memory (Session::memory_report, check_memory). Bytes.
struct MemoryReport {
  int64_t budget = 0;     // SessionOptions::max_memory; 0 = off
  int64_t reserved = 0;   // taken outside the session (SessionOptions::max_memory_reserved, or check_memory's)
  int64_t weights = 0;    // the model's initializers as loaded, counted whole (mapped views count as resident)
  int64_t run_limit = 0;  // each run's tensors: budget - reserved - weights (memory_limit_bytes); 0 = no budget
  std::string shape;      // the dry-run shape, "input_ids[8,256] attention_mask[8,256]"; "" when none ran
  int64_t first_run = 0;  // RunStats::peak_bytes of its first run (tensor by tensor; the heap keeps that memory)
  int64_t arena = 0;      // RunStats::arena_bytes of its second run (the shape's static plan, kept for reuse)
  int64_t run() const { return first_run + arena; }
  int64_t total() const { return reserved + weights + run(); }
};

// What the packed-weights cache did for one session (SessionOptions::weights_cache).
struct WeightsCacheReport {
  std::string file;            // the cache file; "" when off
  std::string state = "off";   // off | hit | miss | rebuilt | unavailable
  std::string reason;          // miss: no file yet; rebuilt: what was stale or corrupt; unavailable: the error
  std::string model_hash;      // "sha256:<hex>" of the model file once known
  std::string model_hash_how;  // "hashed in N ms" | "stat unchanged since it was hashed" | "" (not yet)
  int64_t packings = 0;        // packings in the file (hit) or written (miss/rebuilt)
  int64_t bytes = 0;           // their payload bytes
  double open_ms = 0;          // finding, checking (header, key, checksums) and mapping the file at load
  int64_t used = 0;            // packings served from the file so far
  int64_t refused = 0;         // packings found in the file but refused by their kind (packed again)
  std::string refused_why;     // the first refusal's reason
  int64_t not_in_file = 0;     // packings made after the file was written or read (not cached)
  std::string write;           // "" | "pending: after the first run" | "written: ..." | "skipped: ..." | "failed: ..."
};

// What an observer sees after each node ran.
struct NodeEvent {
  size_t index = 0;                  // position in execution order
  const std::string& node_name;
  const std::string& op_type;
  std::span<const std::string> input_names;
  std::span<const Tensor* const> inputs;  // nullptr for absent optional inputs
  std::span<const std::string> output_names;
  std::span<const Tensor* const> outputs;
  std::chrono::nanoseconds elapsed;  // time spent in the op's compute
};

// Called after every node; a non-ok Status stops the run with that error (used by
// --check-numerics). With no observer attached the executor neither times nodes
// nor builds events: it costs nothing.
using NodeObserver = std::function<Status(const NodeEvent&)>;

// Declared input or output of the model.
struct TensorSpec {
  std::string name;
  DataType dtype = DataType::kUndefined;
  bool has_shape = false;             // false: rank unknown
  std::vector<int64_t> dims;          // -1 for a symbolic / unknown dim
  std::vector<std::string> symbols;   // dim_param per dim ("" when none)
  ValueType type = ValueType::kTensor;  // sequence/optional: dtype is the element dtype, no shape
  std::string type_note;              // "sequence<tensor(float)>" when not a tensor
  std::string to_string() const;      // "input_ids: int64[batch, sequence]"
};

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

struct NamedValue {
  std::string name;
  Value value;
};

// One line of what a graph pass changed.
struct PassLogEntry {
  std::string pass;
  std::string message;
};

struct RunStats {
  std::chrono::nanoseconds elapsed{0};
  int64_t arena_bytes = 0;     // 0 when the run used no memory plan
  bool used_memory_plan = false;
  int64_t peak_bytes = 0;      // most bytes live at once during the run
  int64_t nodes_executed = 0;  // after passes, incl. per-signature shape folding
};

// Session::run_unpadded: how a right-padded batch is split into its sequences.
// Each field: default, then why.
struct UnpadOptions {
  // The [batch, seq] input whose rows are ones (real tokens) followed by zeros (padding).
  // "attention_mask": the name Hugging Face exports (torch.onnx, Optimum) give it.
  std::string mask_input = "attention_mask";
  // Each sequence runs at its length rounded up to this multiple (capped at the padded
  // length); the extra positions stay masked. 1 = exact lengths (least compute). A larger
  // multiple bounds the distinct shapes, hence plans (one per length, plan_cache_size),
  // when lengths vary a lot (a server, a pipeline): 8 gives at most 64 for 512 tokens.
  int64_t length_multiple = 1;
  // true: the pool's threads take sequences longest first, each running one sequence on
  // its own thread (no intra-op synchronisation; at batch 8 x 16..128 tokens this beat
  // intra-op threading, docs/benchmarks.md). false: one sequence at a time on all threads
  // (better when there are fewer sequences than threads or sequences are long).
  bool sequences_in_parallel = true;
};

class SessionImpl;

// A choice an op made when the session loaded it (`glassbox explain` prints these).
struct OpDecision {
  std::string node;
  std::string op_type;
  std::string decision;  // what was chosen and why
};

class Session {
 public:
  // Loads, validates (every op supported at the model's opset) and optimizes MODEL.onnx.
  static Result<Session> load(const std::string& path, const SessionOptions& options = {});

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  const SessionOptions& options() const;  // with threads resolved
  const std::vector<PassLogEntry>& pass_log() const;
  size_t node_count() const;  // after load-time passes
  // Choices ops made at load (e.g. a tree ensemble's memory layout), one per node that made one.
  std::vector<OpDecision> op_decisions() const;
  // Rows of the constant table a Gather indexes with the graph input `input` (an embedding lookup
  // by token id): the ids a tokenizer may produce stay below it. 0 when no such Gather exists.
  int64_t embedding_rows(const std::string& input) const;
  // The packed-weights cache's state (SessionOptions::weights_cache). wait_for_write: first
  // wait until a cache file being written in the background is finished (tests, explain).
  WeightsCacheReport weights_cache_report(bool wait_for_write = false) const;
  // The memory account (SessionOptions::max_memory): weights and run limit from load, the last dry run's figures.
  MemoryReport memory_report() const;
  // Dry-runs `inputs` twice (the first run plans their shape, the second runs on its arena) and checks
  // reserved + weights + those run tensors against max_memory: kLimitExceeded naming every number when over
  // (never with max_memory 0). `reserved` >= 0 replaces SessionOptions::max_memory_reserved in this check (a
  // caller that measured more after load). The figures are kept for memory_report().
  Result<MemoryReport> check_memory(const std::vector<NamedTensor>& inputs, int64_t reserved = -1) const;
  // Under max_memory: what is taken outside the session is now `reserved` bytes (measured after load: the load's
  // own growth, a pipeline's other sessions): from now on each run's tensors are limited to the budget less it
  // and the weights (never raised). kLimitExceeded naming the numbers when nothing is left; ok without a budget.
  // A load-time step: call it before the session runs from other threads.
  Status set_reserved(int64_t reserved) const;

  // Runs the model. Inputs are matched by name; every model input must be given,
  // with the declared dtype, rank and fixed dims. Outputs come back in model
  // order, in storage the caller owns (never shared with inputs, initializers or
  // the arena of a later run). Thread-safe: runs may overlap.
  // Tensor inputs and outputs only: a model with a sequence or optional input or
  // output is refused by name (use run_values).
  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs, RunStats* stats = nullptr) const;
  // The same for any model: sequence inputs take Value::sequence, optional inputs
  // a tensor, a sequence or Value::none(); outputs likewise.
  Result<std::vector<NamedValue>> run_values(const std::vector<NamedValue>& inputs, RunStats* stats = nullptr) const;

  // Runs a right-padded batch without computing on its padding (e.g. 8 sentences
  // padded to the longest). The mask input (unpad.mask_input, [batch, seq]) gives each
  // row's length: every row must be ones then zeros, with at least one 1 (left padding
  // and holes are refused, naming the row). Inputs shaped [batch, seq, ...] are cut to
  // [1, len, ...], inputs shaped [batch, ...] to [1, ...]; other inputs go to every
  // sequence unchanged. Each sequence runs on its own length; outputs shaped
  // [1, len, ...] are scattered into [batch, seq, ...] with 0 at padded positions,
  // outputs shaped [1, ...] (pooled, logits) are stacked into [batch, ...]; any other
  // output is refused by name. On the real tokens the outputs equal run() on the padded
  // batch for a model whose attention masks padding (BERT-style encoders); a model that
  // lets padding influence real tokens gives different results: check before using it.
  // stats: elapsed wall time, the largest arena, the sum of nodes executed.
  Result<std::vector<NamedTensor>> run_unpadded(const std::vector<NamedTensor>& inputs, const UnpadOptions& unpad = {},
                                                RunStats* stats = nullptr) const;

  // run() with `observer` called after every node of this run only, instead of the
  // session's own observer. Unlike set_observer(), safe while other runs are in flight
  // (the Python binding's check_numerics / observer arguments); the observer is called on
  // the thread that executes the graph, one node at a time.
  Result<std::vector<NamedTensor>> run_observed(const std::vector<NamedTensor>& inputs, const NodeObserver& observer,
                                                RunStats* stats = nullptr) const;

  // True when the load-time passes bound every SessionOptions::kv_cache_inputs (none named: false).
  bool kv_cache_bound() const;
  // run() with the caller's KV caches bound to the kv_cache_inputs (kv_cache_bound() must hold): one binding
  // per named input, each fed tensor a [batch, kv_heads, past, head_dim] shape whose contents are never read.
  // The run appends every row's new positions to its buffers; each binding must be used by exactly one node
  // (else an error: the plan did not bind it).
  Result<std::vector<NamedTensor>> run_bound(const std::vector<NamedTensor>& inputs, std::vector<KvCacheBinding>& caches,
                                             RunStats* stats = nullptr) const;

  // Attaches (or with nullptr detaches) the per-node observer. Not thread-safe
  // with respect to run(): attach before running.
  void set_observer(NodeObserver observer);
  // Sets SessionOptions::unspecialized_symbols after load (the generation session learns its past-length
  // symbols from the model's inputs) and drops the plans made so far. Not while runs are in flight.
  void set_unspecialized_symbols(std::vector<std::string> symbols);

 private:
  explicit Session(std::unique_ptr<SessionImpl> impl);
  std::unique_ptr<SessionImpl> impl_;
};

// Names of the graph passes, in the order they run, with their opt level.
struct GraphPassInfo {
  const char* name;
  int level;
  const char* what;
};
std::span<const GraphPassInfo> graph_pass_names();

}  // namespace glassbox
