"""Type stubs of the C++ extension module glassbox._glassbox (re-exported by glassbox)."""

from os import PathLike
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union, overload

import numpy as np

_Text = Union[str, Tuple[str, str], List[str]]


class Encoding:
    """The result of encoding one input (or pair): the fields of tokenizers.Encoding."""
    @property
    def ids(self) -> List[int]: """Token ids."""
    @property
    def type_ids(self) -> List[int]: """Segment ids (0 first sequence, 1 pair)."""
    @property
    def tokens(self) -> List[str]: """Token strings."""
    @property
    def offsets(self) -> List[Tuple[int, int]]: """(start, end) per token in code points."""
    @property
    def attention_mask(self) -> List[int]: """1 for real tokens, 0 for padding."""
    @property
    def special_tokens_mask(self) -> List[int]: """1 for tokens added by the post-processor or padding."""
    @property
    def word_ids(self) -> List[Optional[int]]: """Word index per token (None for special and pad tokens)."""
    @property
    def overflowing(self) -> List["Encoding"]: """Windows cut off by truncation, in order."""
    def __len__(self) -> int: ...


class Tokenizer:
    """A Hugging Face tokenizer.json, output identical to the `tokenizers` library."""
    @staticmethod
    def from_file(path: Union[str, "PathLike[str]"]) -> "Tokenizer": """Loads a tokenizer.json."""
    @staticmethod
    def from_str(json: str) -> "Tokenizer": """Loads a tokenizer from the text of a tokenizer.json."""
    def encode(self, sequence: str, pair: Optional[str] = None, add_special_tokens: bool = True) -> Encoding:
        """Encodes one text (and its pair)."""
    @overload
    def encode_batch(self, input: Sequence[_Text], add_special_tokens: bool = True, return_tensors: None = None,
                     threads: int = 1) -> List[Encoding]: ...
    @overload
    def encode_batch(self, input: Sequence[_Text], add_special_tokens: bool = True, return_tensors: str = "np",
                     threads: int = 1) -> Dict[str, np.ndarray]: ...
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str: """Ids back to text."""
    def decode_batch(self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True) -> List[str]:
        """decode() of each id list."""
    def enable_truncation(self, max_length: int, stride: int = 0, strategy: str = "longest_first",
                          direction: str = "right") -> None:
        """Truncate every encoding to max_length tokens; replaces the file's truncation."""
    def no_truncation(self) -> None: """Never truncate."""
    def enable_padding(self, direction: str = "right", pad_id: Optional[int] = None, pad_type_id: int = 0,
                       pad_token: str = "[PAD]", length: Optional[int] = None,
                       pad_to_multiple_of: Optional[int] = None) -> None:
        """Pad batches to their longest encoding (or to `length`); replaces the file's padding."""
    def no_padding(self) -> None: """Never pad."""
    @property
    def truncation(self) -> Optional[Dict[str, Any]]: """The truncation in effect (None: never truncates)."""
    @property
    def padding(self) -> Optional[Dict[str, Any]]: """The padding in effect (None: never pads)."""
    def token_to_id(self, token: str) -> Optional[int]: """Id of a token, None if absent."""
    def id_to_token(self, id: int) -> Optional[str]: """Token of an id, None if absent."""
    def get_vocab_size(self) -> int: """Vocabulary size including added tokens."""


class TensorInfo:
    """A declared input or output of the model."""
    @property
    def name(self) -> str: """Input / output name."""
    @property
    def dtype(self) -> str: """numpy dtype name ('float32', 'int64', ...)."""
    @property
    def shape(self) -> Optional[List[Union[int, str, None]]]: """int fixed, str symbolic, None unknown."""
    @property
    def kind(self) -> str: """'tensor' or the declared sequence / optional type."""


class Session:
    """An ONNX model loaded, validated and optimized by glassbox's engine."""
    def __init__(self, path: Union[str, "PathLike[str]"], *, threads: int = 0, opt_level: int = 2,
                 precision: str = "fp32", disabled_passes: Optional[Sequence[str]] = None,
                 memory_limit_bytes: int = 17179869184, plan_cache_size: int = 64, use_memory_plan: bool = True,
                 map_initializers: bool = True,
                 weights_cache: Optional[Union[str, "PathLike[str]"]] = None, pool_wait: str = "auto",
                 max_memory: Optional[Union[int, str]] = None,
                 max_input_shapes: Optional[Mapping[str, Sequence[int]]] = None) -> None:
        """Loads MODEL.onnx; precision: 'fp32' (default), 'bf16' or 'int8-dynamic' (as the CLI's --precision);
        weights_cache: directory of the packed-weights cache (as --weights-cache; None: off);
        pool_wait: 'auto' (default), 'spin' or 'sleep' (as --pool-wait); max_memory (None: off; bytes or
        '512M', as --max-memory) with max_input_shapes ({input: [dims]}, dry-run at load): LimitExceeded at load
        naming every number when it does not fit (docs/memory.md)."""
    def memory_report(self) -> Dict[str, Any]:
        """budget, reserved, weights, run_limit, shape, first_run, arena, total (bytes) of the memory account."""
    @property
    def inputs(self) -> List[TensorInfo]: """Declared inputs."""
    @property
    def outputs(self) -> List[TensorInfo]: """Declared outputs."""
    @property
    def options(self) -> Dict[str, Any]: """The options in effect (threads resolved)."""
    @property
    def path(self) -> str: """The model file."""
    @property
    def node_count(self) -> int: """Nodes after the load-time passes."""
    @property
    def pass_log(self) -> List[Tuple[str, str]]: """What each graph pass changed at load."""
    def weights_cache_report(self, *, wait_for_write: bool = False) -> Dict[str, Any]:
        """The packed-weights cache of this load (state off | hit | miss | rebuilt | unavailable, reason, ...)."""
    def run(self, feeds: Mapping[str, np.ndarray], outputs: Optional[Sequence[str]] = None, *,
            check_numerics: bool = False,
            observer: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, np.ndarray]:
        """Runs the model; the GIL is released meanwhile."""
    def run_unpadded(self, feeds: Mapping[str, np.ndarray], outputs: Optional[Sequence[str]] = None, *,
                     mask_input: str = "attention_mask", length_multiple: int = 1,
                     sequences_in_parallel: bool = True) -> Dict[str, np.ndarray]:
        """Runs a right-padded batch without computing on its padding."""
    def explain(self) -> Dict[str, Any]: """Every effective option with value, source, reason and risk."""


class _Pipeline:
    """glassbox::Pipeline; use glassbox.pipeline()."""
    def __init__(self, model_dir: str, threads: int, opt_level: int, truncation: Optional[str],
                 batch_size: Optional[int], precision: Optional[str] = None,
                 weights_cache: Optional[str] = None, max_memory: Optional[Union[int, str]] = None) -> None: ...
    def memory_report(self) -> Optional[Dict[str, int]]: ...
    task: str
    labels: List[str]
    model_dir: str
    output: str  # "dense" | "sparse"
    def classify(self, texts: Sequence[Any], top_k: int) -> List[Tuple[List[Dict[str, Any]], int, int, Optional[bool]]]: ...
    similarity_function: str
    # dense: [n, dim] float32; sparse (output == "sparse"): one (indices int64 [k], values float32 [k]) per text
    def embed(self, texts: Sequence[Any], prompt_name: Optional[str] = None,
              dimensions: Optional[int] = None, query: bool = False) -> Tuple[Any, List[int], List[int]]: ...
    def similarity(self, a: np.ndarray, b: np.ndarray) -> float: ...
    def rerank(self, query: str, documents: Sequence[str], top_n: Optional[int],
               raw_scores: bool, overflow: Optional[str] = None) -> List[Dict[str, Any]]: ...
    def explain(self) -> Dict[str, Any]: ...


class GenerationSession:
    """A decoder model directory ready to generate: prefill() admits prompts, step() advances them by one token."""
    def __init__(self, model_dir: Union[str, "PathLike[str]"], *, threads: int = 0, precision: Optional[str] = None,
                 max_context: Optional[int] = None, kv_budget_bytes: Optional[int] = None) -> None:
        """Loads MODEL_DIR (model.onnx, tokenizer.json, config.json, optional generation files)."""
    @property
    def model_dir(self) -> str: """The model directory."""
    def explain(self) -> Dict[str, Any]: """As `glassbox generate --explain`."""
    def resolve(self, **kwargs: Any) -> Dict[str, Any]: """The policy these arguments get, with sources."""
    def render_chat(self, messages_json: str, add_generation_prompt: Optional[bool] = None,
                    continue_final_message: Optional[bool] = None) -> Dict[str, Any]:
        """Messages rendered by the model's chat template, tokenized without special tokens."""
    def prefill(self, inputs: Sequence[Any], **kwargs: Any) -> Tuple[List[int], List[Dict[str, Any]]]:
        """Admits prompts and runs them: (sequence ids, events)."""
    def step(self, ids: Optional[Sequence[int]] = None) -> List[Dict[str, Any]]: """One token per active sequence."""
    def active(self) -> List[int]: """Sequences not finished."""
    def take_result(self, id: int) -> Dict[str, Any]: """The result of a finished sequence."""
    def cancel(self, id: int) -> None: """Ends a sequence and frees it."""


class _VisionPipeline:
    """glassbox::vision pipelines; use glassbox.pipeline()."""
    def __init__(self, model_dir: str, task: str, threads: int, opt_level: int) -> None: ...
    task: str
    labels: List[str]
    model_dir: str
    def run(self, images: Sequence[Any], top_k: int = 5) -> Any: ...
    def explain(self) -> Dict[str, Any]: ...


def _image_model_task(model_dir: str) -> str: ...
def default_model_dir() -> str: """The C++ lookup: installed layout next to the executable, else the source tree's models/langid."""
def physical_core_count() -> int: """Physical CPU cores: what threads=0 resolves to."""
def _bench_cpp_run(session: Session, feeds: Mapping[str, np.ndarray], repeat: int) -> float: ...
def _bench_cpp_pipeline(pipeline: _Pipeline, texts: Sequence[str], repeat: int) -> float: ...
