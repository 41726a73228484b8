"""glassbox.pipeline(): transformers-style text pipelines over glassbox::Pipeline."""

import json
import os
from typing import Any, Dict, List, Optional, Union

import numpy as np

from . import _glassbox
from .errors import InvalidInput, ModelError

_TASKS = {"text-classification": "classify", "feature-extraction": "embed", "text-ranking": "classify",
          "sentence-similarity": "embed"}
_VISION_TASKS = {"image-classification": "classify", "image-feature-extraction": "embed", "ocr": "ocr"}


def default_model_dir() -> str:
    """The model directory used when ``model_dir`` is None.

    The copy of models/langid installed with the package (``glassbox/models/langid``), else
    the C++ lookup (``_glassbox.default_model_dir()``: ``<executable dir>/../share/glassbox/models/langid``,
    then the source tree's models/langid compiled into the library, for a build-tree import).
    """
    packaged = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "langid")
    if os.path.isfile(os.path.join(packaged, "model.onnx")):
        return packaged
    return _glassbox.default_model_dir()


class Pipeline:
    """A model directory (model.onnx, tokenizer.json, config.json, optional glassbox.json) ready to run."""

    def __init__(self, task: str, core: Any) -> None:
        self.task = task
        self._core = core

    @property
    def model_dir(self) -> str:
        """The model directory this pipeline was loaded from."""
        return self._core.model_dir

    def explain(self) -> Dict[str, Any]:
        """Every decision the pipeline runs with, as ``glassbox explain MODEL_DIR --json`` prints them.

        ``result["pipeline"]``: one dict per decision (``field``, ``value``, ``source``: glassbox.json,
        config.json, a default with its reason...); ``result["options"]``: every engine option with
        value, default, source, reason and risk.
        """
        return self._core.explain()

    def memory_report(self) -> Optional[Dict[str, int]]:
        """The memory estimate checked at load under ``max_memory`` (docs/memory.md), in bytes: ``batch`` x
        ``tokens`` (the largest declared shape), ``process``, ``tokenizer``, ``weights``, ``first_run``, ``arena``,
        ``total``, ``budget`` and ``run_limit``; None when the pipeline has no budget (text pipelines only)."""
        report = getattr(self._core, "memory_report", None)
        return report() if report else None

    @staticmethod
    def _as_list(inputs: Any) -> "tuple[list, bool]":
        if isinstance(inputs, (str, dict)):
            return [inputs], True
        if isinstance(inputs, (list, tuple)):
            return list(inputs), False
        raise InvalidInput(f"inputs must be a str or a list of str, got {type(inputs).__name__}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_dir={self.model_dir!r})"


class TextClassificationPipeline(Pipeline):
    """``pipeline("text-classification")``: labels with scores per text (the model's declared score function:
    softmax, sigmoid or none; ``explain()`` shows it and its source)."""

    @property
    def labels(self) -> List[str]:
        """The label of each logit, in model order."""
        return list(self._core.labels)

    def __call__(self, inputs: Union[str, List[str]], top_k: Optional[int] = None) -> List[Any]:
        """Classifies one text or a list of texts.

        ``top_k=None``: the best label per text: ``[{"label", "score"}]`` for a str, one such dict per
        text for a list. ``top_k=k``: the k best labels, sorted by score: a list of k dicts for a str,
        a list of such lists for a list. A text over the model's max_length is LimitExceeded unless
        glassbox.json (or ``truncation=``) declares a truncation policy.
        """
        texts, single = self._as_list(inputs)
        results = self._core.classify(texts, 1 if top_k is None else top_k)
        if top_k is None:
            best = [labels[0] for labels, _, _, _ in results]
            return best if not single else best[:1]
        ranked = [labels for labels, _, _, _ in results]
        return ranked[0] if single else ranked

    def details(self, inputs: Union[str, List[str]], top_k: int = 1) -> List[Dict[str, Any]]:
        """As ``glassbox classify`` prints per text: ``label``, ``abstained`` (only when the model declares
        glassbox.json ``abstain_below``: the top score is below it), ``labels`` (top_k), ``tokens``,
        ``tokens_dropped``."""
        texts, _ = self._as_list(inputs)
        out = []
        for labels, tokens, dropped, abstained in self._core.classify(texts, top_k):
            d = {"label": labels[0]["label"]}
            if abstained is not None:
                d["abstained"] = abstained
            d.update({"labels": labels, "tokens": tokens, "tokens_dropped": dropped})
            out.append(d)
        return out


class FeatureExtractionPipeline(Pipeline):
    """``pipeline("feature-extraction")``: one vector per text, pooled as the model directory declares.
    A sparse (SPLADE) model (``output == "sparse"``) gives ``{"indices": int64 [k], "values": float32 [k]}``
    per text: its nonzero vocabulary weights, indices ascending. A multi-vector (ColBERT) model
    (``output == "multi_vector"``) gives a float32 array [kept tokens, dim] of unit vectors per text; ``query=True``
    encodes the texts as queries (docs/retrieval.md "Multi-vector embeddings"). A model declaring glassbox.json
    ``heads`` (the BGE-M3 shape, ``output == "heads"``) gives per text a dict of its declared heads, all from one
    engine run per batch: ``"dense"`` float32 [dim], ``"sparse"`` ``{"indices", "values"}``, ``"multi_vector"``
    float32 [rows, dim]."""

    @property
    def output(self) -> str:
        """``"dense"``, ``"sparse"`` (a SpladePooling module or glassbox.json ``sparse``), ``"multi_vector"``
        (PyLate's ColBERT layout or glassbox.json ``multi_vector``) or ``"heads"`` (glassbox.json ``heads``: several
        from one run); see explain()."""
        return self._core.output

    def __call__(self, inputs: Union[str, List[str]], prompt_name: Optional[str] = None,
                 dimensions: Optional[int] = None, query: bool = False) -> Any:
        """Embeds one text (float32 array [dim]) or a list of texts (float32 array [n, dim]); a sparse model:
        one ``{"indices", "values"}`` dict, or a list of them.

        Unlike transformers' per-token features, the vectors are pooled (cls / mean / none) and
        optionally L2-normalized as glassbox.json declares or derives (see explain()).
        ``prompt_name``: a prompt the model declares (config_sentence_transformers.json ``prompts``; None:
        its ``default_prompt_name``, if any), put before each text as sentence-transformers does.
        ``dimensions``: Matryoshka, keep the first N values, then normalize when the model normalizes.
        """
        texts, single = self._as_list(inputs)
        vectors, _, _ = self._core.embed(texts, prompt_name, dimensions, query)
        if self.output == "sparse":
            vectors = [{"indices": idx, "values": val} for idx, val in vectors]
        elif self.output == "heads":
            for v in vectors:
                if "sparse" in v:
                    v["sparse"] = {"indices": v["sparse"][0], "values": v["sparse"][1]}
        return vectors[0] if single else vectors

    def details(self, inputs: Union[str, List[str]], prompt_name: Optional[str] = None,
                dimensions: Optional[int] = None) -> List[Dict[str, Any]]:
        """As ``glassbox embed`` prints per text: ``vector`` (list) or, sparse, ``indices`` and ``values``;
        ``tokens``, ``tokens_dropped``."""
        texts, _ = self._as_list(inputs)
        vectors, tokens, dropped = self._core.embed(texts, prompt_name, dimensions)
        if self.output == "heads":
            return [dict({k: (v.tolist() if k != "sparse" else {"indices": v[0].tolist(), "values": v[1].tolist()})
                          for k, v in vectors[i].items()}, tokens=tokens[i], tokens_dropped=dropped[i])
                    for i in range(len(texts))]
        if self.output == "sparse":
            return [{"indices": vectors[i][0].tolist(), "values": vectors[i][1].tolist(), "tokens": tokens[i],
                     "tokens_dropped": dropped[i]} for i in range(len(texts))]
        return [{"vector": vectors[i].tolist(), "tokens": tokens[i], "tokens_dropped": dropped[i]}
                for i in range(len(texts))]


class SentenceSimilarityPipeline(FeatureExtractionPipeline):
    """``pipeline("sentence-similarity")`` (the Hugging Face task name): one source sentence against a list,
    scored with the model's declared ``similarity_fn_name`` (config_sentence_transformers.json; default cosine,
    sentence-transformers' own), as TEI's ``POST /similarity`` does."""

    @property
    def similarity_function(self) -> str:
        """``cosine``, ``dot``, ``euclidean`` or ``manhattan`` (``explain()`` shows its source)."""
        return self._core.similarity_function

    def __call__(self, source_sentence: Union[str, Dict[str, Any]], sentences: Optional[List[str]] = None,
                 prompt_name: Optional[str] = None, dimensions: Optional[int] = None) -> List[float]:  # type: ignore[override]
        """One score per sentence, in order. ``source_sentence`` may also be the Hub's payload
        ``{"source_sentence": str, "sentences": [str, ...]}``. Euclidean and manhattan scores are negative
        distances (higher is more similar), as sentence-transformers defines them."""
        if isinstance(source_sentence, dict):
            if sentences is not None:
                raise InvalidInput("give sentences in the dict or as an argument, not both")
            sentences = source_sentence.get("sentences")
            source_sentence = source_sentence.get("source_sentence")
        if not isinstance(source_sentence, str) or not isinstance(sentences, (list, tuple)) or not sentences:
            raise InvalidInput("sentence-similarity needs a source_sentence (str) and a non-empty list of sentences")
        vectors, _, _ = self._core.embed([source_sentence] + list(sentences), prompt_name, dimensions)
        if self._core.output == "heads":  # glassbox.json "heads": the dense head, as the server's /similarity
            if "dense" not in vectors[0]:
                raise InvalidInput(f"{self.model_dir}: the model declares no dense head (glassbox.json heads)")
            vectors = [v["dense"] for v in vectors]
        return [float(self._core.similarity(vectors[0], v)) for v in vectors[1:]]


class TextRankingPipeline(Pipeline):
    """``pipeline("text-ranking")``: a cross-encoder (a text classifier with one label) scores (query, document)
    pairs, like sentence-transformers' ``CrossEncoder.rank``; a multi-vector (ColBERT/PyLate) model embeds the
    query (query role) and the documents and ranks them by MaxSim, as ``glassbox rerank`` does
    (``score == logit == MaxSim``; ``scoring == "max_sim"``)."""

    @property
    def scoring(self) -> str:
        """``"cross_encoder"`` (the declared score function of one logit per pair) or ``"max_sim"`` (late
        interaction: the sum over query vectors of the best dot product with a document vector)."""
        return "max_sim" if self._core.output == "multi_vector" else "cross_encoder"

    def __call__(self, query: str, documents: List[str], top_n: Optional[int] = None,
                 raw_scores: bool = False, overflow: Optional[str] = None) -> List[Dict[str, Any]]:
        """Ranks the documents against the query, best first (ties keep the documents' order):
        ``[{"index", "score", "logit", "text", "tokens", "tokens_dropped", "windows"}]``. ``score`` is the
        model's declared score function of its logit (``raw_scores=True``: the logit). A pair over the
        model's max_length is LimitExceeded unless a policy says otherwise: ``overflow="truncate"`` cuts
        the document (never the query; ``tokens_dropped`` says how much), ``overflow="split"`` scores the
        document by its best window of the document (``windows``), as does the pipeline's
        ``truncation="only_second"`` for truncation."""
        return list(self._core.rerank(query, documents, top_n, raw_scores, overflow))


class ImagePipeline(Pipeline):
    """Image pipelines over glassbox::vision. An image is a path (str, os.PathLike), encoded JPEG/PNG/WebP
    bytes (bytes, bytearray, memoryview; the format from its magic bytes, decoded under the declared limits,
    EXIF orientation applied) or a numpy uint8 array [height, width, 3] declared RGB (used as given: no
    EXIF, no channel swap). A list (or tuple) of them is a batch."""

    @staticmethod
    def _images(inputs: Any) -> "tuple[list, bool]":
        if isinstance(inputs, np.ndarray) and inputs.ndim == 4:
            return list(inputs), False
        if isinstance(inputs, (list, tuple)):
            return list(inputs), False
        return [inputs], True


class ImageClassificationPipeline(ImagePipeline):
    """``pipeline("image-classification")``: labels with scores per image (softmax, or sigmoid for
    ``problem_type: multi_label_classification``; ``explain()`` shows every preprocessing step)."""

    @property
    def labels(self) -> List[str]:
        """The label of each logit, in model order."""
        return list(self._core.labels)

    def __call__(self, images: Any, top_k: int = 5) -> List[Any]:
        """The top_k labels (default 5, as transformers' image-classification pipeline): a list of
        ``{"label", "score"}`` for one image, a list of such lists for a batch."""
        items, single = self._images(images)
        ranked = [labels for labels, _ in self._core.run(items, top_k)]
        return ranked[0] if single else ranked

    def details(self, images: Any, top_k: int = 5) -> List[Dict[str, Any]]:
        """As ``glassbox classify`` prints per image: ``label``, ``labels`` (top_k), ``logits`` (every label)."""
        items, _ = self._images(images)
        return [{"label": labels[0]["label"], "labels": labels, "logits": logits}
                for labels, logits in self._core.run(items, top_k)]


class ImageFeatureExtractionPipeline(ImagePipeline):
    """``pipeline("image-feature-extraction")``: one vector per image (image_embeds, pooler_output or a
    declared pooling of last_hidden_state; normalized only when glassbox.json declares it)."""

    def __call__(self, images: Any) -> np.ndarray:
        """float32 [dim] for one image, [n, dim] for a batch. Every image is preprocessed to the model's
        declared size, so a batch of mixed sizes is one engine run with no padding (one run per image
        when the model's batch dimension is fixed)."""
        items, single = self._images(images)
        vectors = self._core.run(items)
        return vectors[0] if single else vectors


class OcrPipeline(ImagePipeline):
    """``pipeline("ocr")``: PP-OCR (detection, angle classifier, recognition) as ``glassbox ocr`` runs it."""

    def __call__(self, images: Any) -> Any:
        """One dict per image: ``width``, ``height``, ``lines`` (``text``, ``score``, ``box``: four points
        clockwise from top-left, ``box_score``, ``rotated_180``), ``boxes_found``, ``det_size``; a dict for
        one image, a list for a batch."""
        items, single = self._images(images)
        out = self._core.run(items)
        return out[0] if single else out


def _vision_pipeline(task: str, directory: str, threads: int, opt_level: int) -> ImagePipeline:
    found = _glassbox._image_model_task(directory)
    want = _VISION_TASKS[task]
    if found != want:
        what = "not an image or OCR model directory" if not found else f"the model directory's task is '{found}'"
        err = InvalidInput(f"{directory}: {what}, not '{want}' as pipeline({task!r}) needs "
                           "(fix: an image model holds preprocessor_config.json; its task comes from glassbox.json "
                           "\"task\" or config.json architectures; an OCR directory has glassbox.json \"ocr\")")
        err.code, err.what, err.where = "invalid argument", "task mismatch", directory
        raise err
    core = _glassbox._VisionPipeline(directory, want, threads, opt_level)
    cls = {"classify": ImageClassificationPipeline, "embed": ImageFeatureExtractionPipeline, "ocr": OcrPipeline}[want]
    return cls(task, core)


class TextGenerationPipeline(Pipeline):
    """``pipeline("text-generation", MODEL_DIR)``: a decoder model directory (glassbox.GenerationSession) with
    transformers' text-generation pipeline semantics. Every generation parameter comes back with its source
    (argument > glassbox.json > generation_config.json > config.json > glassbox default) in ``policy``."""

    @property
    def session(self) -> Any:
        """The glassbox.GenerationSession underneath (prefill/step for schedulers and power users)."""
        return self._core

    def explain(self) -> Dict[str, Any]:
        """As ``glassbox generate --explain``: decoder, KV memory, the default policy with sources, glassbox's
        defaults with reason and risk, load warnings."""
        return self._core.explain()

    @staticmethod
    def _is_chat(x: Any) -> bool:
        return isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(m, dict) for m in x)

    def _prepare(self, x: Any, chat_args: Dict[str, Any]) -> Dict[str, Any]:
        if isinstance(x, str):
            return {"input": x, "prompt": x, "messages": None, "chat": None}
        if self._is_chat(x):
            chat = self._core.render_chat(json.dumps(list(x), ensure_ascii=False), **chat_args)
            return {"input": {"prompt_ids": chat["prompt_ids"], "chat": True}, "prompt": chat["prompt"],
                    "messages": list(x), "chat": chat}
        raise InvalidInput("text-generation input must be a str, a list of chat messages (dicts with 'role' and "
                           f"'content'), or a list of those; got {type(x).__name__}")

    @staticmethod
    def _shape(p: Dict[str, Any], result: Dict[str, Any], return_full_text: bool) -> Dict[str, Any]:
        text = result["text"]
        if not return_full_text:
            generated: Any = text
        elif p["messages"] is None:
            generated = p["prompt"] + text
        elif p["chat"]["continue_final_message"]["value"]:  # transformers: the final message continued
            last = p["messages"][-1]
            if not isinstance(last.get("content"), str):
                raise InvalidInput("return_full_text=True continues the final message's content, which is not a str "
                                   "here (fix: pass return_full_text=False)")
            generated = list(p["messages"][:-1]) + [{"role": last["role"], "content": last["content"] + text}]
        else:  # transformers: the conversation with the reply as a new assistant message
            generated = list(p["messages"]) + [{"role": "assistant", "content": text}]
        out = {"generated_text": generated, "finish_reason": result["finish_reason"], "policy": result["policy"],
               "ids": result["ids"], "usage": result["usage"]}
        for key in ("stop_token", "stop_string"):
            if key in result:
                out[key] = result[key]
        if p["chat"] is not None:
            out["chat"] = {k: v for k, v in p["chat"].items() if k != "prompt_ids"}
        return out

    def _result(self, sequence_id: int) -> Dict[str, Any]:
        result = self._core.take_result(sequence_id)
        if result["finish_reason"] == "error":
            err = ModelError(f"{self.model_dir}: generation failed: {result['error']} (fix: run `glassbox run "
                             "--check-numerics` on this step's inputs to find the first node that produced it)")
            err.code, err.what, err.where = "invalid model", result["error"], self.model_dir
            raise err
        return result

    def __call__(self, inputs: Any, *, return_full_text: bool = True, stream: bool = False,
                 continue_final_message: Optional[bool] = None, add_generation_prompt: Optional[bool] = None,
                 max_new_tokens: Optional[int] = None, do_sample: Optional[bool] = None,
                 temperature: Optional[float] = None, top_k: Optional[int] = None, top_p: Optional[float] = None,
                 min_p: Optional[float] = None, repetition_penalty: Optional[float] = None, seed: Optional[int] = None,
                 stop: Optional[Union[str, List[str]]] = None, stop_token_ids: Optional[List[int]] = None,
                 skip_special_tokens: Optional[bool] = None) -> Any:
        """Generates from a prompt string or a chat (a list of ``{"role", "content"}`` messages, rendered by the
        model's own chat template, tokenized without adding special tokens again), or a list of those (one batch).

        Returns ``[{"generated_text", "finish_reason", "policy", "ids", "usage"}]`` per input (a list of such lists
        for a list of inputs), as transformers: ``return_full_text=True`` (default) gives the prompt followed by
        the completion (a chat: the conversation with the assistant's reply appended, or the continued final
        message), False the completion only. A chat ending in an assistant message is continued unless
        ``continue_final_message=False`` (transformers' rule; ``chat`` in the result says which, with sources).
        Unset (None) parameters come from the model's files, else glassbox's defaults (greedy, 256 new tokens).
        ``stream=True`` (one input only) returns a TextGenerationStream: iterate it for the text pieces as they
        become final; its ``result`` is the dict above once it is exhausted.
        """
        params = {"max_new_tokens": max_new_tokens, "do_sample": do_sample, "temperature": temperature,
                  "top_k": top_k, "top_p": top_p, "min_p": min_p, "repetition_penalty": repetition_penalty,
                  "seed": seed, "stop": stop, "stop_token_ids": stop_token_ids,
                  "skip_special_tokens": skip_special_tokens}
        if not isinstance(return_full_text, bool) or not isinstance(stream, bool):
            raise InvalidInput("return_full_text and stream must be True or False")
        chat_args = {"continue_final_message": continue_final_message, "add_generation_prompt": add_generation_prompt}
        single = isinstance(inputs, str) or self._is_chat(inputs)
        if not single and not (isinstance(inputs, (list, tuple)) and len(inputs) > 0):
            raise InvalidInput("text-generation input must be a str, a list of chat messages, or a non-empty list "
                               f"of those; got {type(inputs).__name__}")
        prepared = [self._prepare(x, chat_args) for x in ([inputs] if single else inputs)]
        if stream:
            if not single:
                raise InvalidInput("stream=True takes one prompt or one chat, not a list")
            return TextGenerationStream(self, prepared[0], params, return_full_text)
        ids, _ = self._core.prefill([p["input"] for p in prepared], **params)
        try:
            mine = set(ids)
            while True:  # only these sequences: a stream of this pipeline may be in flight too
                active = [i for i in self._core.active() if i in mine]
                if not active:
                    break
                self._core.step(active)
            results = [self._result(i) for i in ids]
        finally:
            for i in ids:
                self._core.cancel(i)
        shaped = [[self._shape(p, r, return_full_text)] for p, r in zip(prepared, results)]
        return shaped[0] if single else shaped


class TextGenerationStream:
    """The iterator ``TextGenerationPipeline(..., stream=True)`` returns: text pieces as they become final
    (a character split across tokens waits for its last byte; a possible stop string waits until decided).
    ``result`` is the pipeline's result dict once the iteration is over (None before)."""

    def __init__(self, owner: TextGenerationPipeline, prepared: Dict[str, Any], params: Dict[str, Any],
                 return_full_text: bool) -> None:
        self._owner, self._prepared, self._return_full_text = owner, prepared, return_full_text
        self.result: Optional[Dict[str, Any]] = None
        ids, events = owner.session.prefill([prepared["input"]], **params)
        self._id = ids[0]
        self._pending = [e for e in events if e["text"]]
        self._done = any(e["finish_reason"] for e in events)

    def __iter__(self) -> "TextGenerationStream":
        return self

    def __next__(self) -> str:
        while not self._pending:
            if self._done:
                if self.result is None:
                    try:
                        r = self._owner._result(self._id)
                    finally:
                        self._owner.session.cancel(self._id)
                    self.result = self._owner._shape(self._prepared, r, self._return_full_text)
                raise StopIteration
            events = self._owner.session.step([self._id])
            self._pending = [e for e in events if e["text"]]
            self._done = any(e["finish_reason"] for e in events)
        return self._pending.pop(0)["text"]

    def __del__(self) -> None:
        if self.result is None and getattr(self, "_owner", None) is not None and hasattr(self, "_id"):
            try:
                self._owner.session.cancel(self._id)  # abandoned mid-way: free its KV cache
            except Exception:  # noqa: BLE001 - interpreter shutdown may have torn the module down
                pass


def pipeline(task: str, model_dir: Optional[Union[str, "os.PathLike[str]"]] = None, *, threads: int = 0,
             opt_level: int = 2, truncation: Optional[str] = None,
             batch_size: Optional[int] = None,
             precision: Optional[str] = None,
             weights_cache: Optional[Union[str, "os.PathLike[str]"]] = None,
             max_memory: Optional[Union[int, str]] = None
             ) -> Union[TextClassificationPipeline, FeatureExtractionPipeline, "TextRankingPipeline",
                                 "SentenceSimilarityPipeline", "TextGenerationPipeline"]:
    """Loads a text or image pipeline, like ``transformers.pipeline(task, model=...)``.

    ``"text-generation"`` takes a decoder model directory (required) and ``threads``/``precision``
    (see TextGenerationPipeline and GenerationSession).
    Image tasks: ``"image-classification"``, ``"image-feature-extraction"`` and ``"ocr"`` take a model
    directory (required) and ``threads``/``opt_level``; the other arguments are text settings.

    task: ``"text-classification"``, ``"feature-extraction"``, ``"sentence-similarity"`` (an embedding model,
    scores with its declared similarity function) or ``"text-ranking"`` (a cross-encoder: a
    classify model with one label; or a multi-vector model, ranked by MaxSim); it must match the task the model
    directory declares (glassbox.json ``task``) or that is derived from it, else InvalidInput.
    model_dir: a directory in the Hugging Face Optimum layout; None: the embedded default model
    (models/langid, language identification; see default_model_dir()).
    threads (0: physical cores), opt_level, truncation (None: glassbox.json's, else an overlong
    input is an error; ``"none" | "longest_first" | "only_first" | "only_second"``) and batch_size
    (None: glassbox.json's, else 8) and precision (None: glassbox.json's, else fp32; ``"fp32" | "bf16" |
    "int8-dynamic"``) and weights_cache (None: glassbox.json's, else off; a directory where the packed
    weights are kept so later loads map them) are the same settings as ``glassbox classify`` flags.
    max_memory (None: glassbox.json's ``max_memory``, else off; bytes or ``"512M"``): the declared memory budget
    of a text pipeline (docs/memory.md), as ``--max-memory``: the process, tokenizer, weights and the dry runs of
    the largest declared shape must fit, else LimitExceeded naming every number; ``memory_report()`` on the
    returned pipeline gives the estimate.
    """
    if task == "text-generation":
        if model_dir is None:
            raise InvalidInput("pipeline('text-generation') needs a decoder model directory (there is no embedded one)")
        core = _glassbox.GenerationSession(os.fspath(model_dir), threads=threads, precision=precision)
        return TextGenerationPipeline(task, core)
    if task in _VISION_TASKS:
        if model_dir is None:
            raise InvalidInput(f"pipeline({task!r}) needs a model directory (there is no embedded image model)")
        return _vision_pipeline(task, os.fspath(model_dir), threads, opt_level)
    if task not in _TASKS:
        raise InvalidInput(f"task {task!r} is not one of "
                           f"{sorted(list(_TASKS) + list(_VISION_TASKS) + ['text-generation'])}")
    directory = default_model_dir() if model_dir is None else os.fspath(model_dir)
    cache = None if weights_cache is None else os.fspath(weights_cache)
    core = _glassbox._Pipeline(directory, threads, opt_level, truncation, batch_size, precision, cache, max_memory)
    late_interaction = task == "text-ranking" and core.task == "embed" and core.output == "multi_vector"
    if core.task != _TASKS[task] and not late_interaction:
        err = InvalidInput(f"{directory}: the model directory's task is '{core.task}', "
                           f"not '{_TASKS[task]}' as pipeline({task!r}) needs "
                           f"(fix: use pipeline({[k for k, v in _TASKS.items() if v == core.task][0]!r}) "
                           f"or set \"task\" in glassbox.json)")
        err.code, err.what, err.where = "invalid argument", "task mismatch", directory
        raise err
    cls = {"text-classification": TextClassificationPipeline, "feature-extraction": FeatureExtractionPipeline,
           "text-ranking": TextRankingPipeline, "sentence-similarity": SentenceSimilarityPipeline}[task]
    if cls is TextRankingPipeline and not late_interaction and len(core.labels) != 1:
        err = InvalidInput(f"{directory}: pipeline('text-ranking') needs a cross-encoder with one logit per pair; "
                           f"this model has {len(core.labels)} labels (fix: use pipeline('text-classification'))")
        err.code, err.what, err.where = "invalid argument", "not a cross-encoder", directory
        raise err
    return cls(task, core)
