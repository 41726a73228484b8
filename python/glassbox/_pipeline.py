"""glassbox.pipeline(): transformers-style text pipelines over glassbox::Pipeline."""

import os
from typing import Any, Dict, List, Optional, Union

import numpy as np

from . import _glassbox
from .errors import InvalidInput

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
            best = [labels[0] for labels, _, _ in results]
            return best if not single else best[:1]
        ranked = [labels for labels, _, _ in results]
        return ranked[0] if single else ranked

    def details(self, inputs: Union[str, List[str]], top_k: int = 1) -> List[Dict[str, Any]]:
        """As ``glassbox classify`` prints per text: ``label``, ``labels`` (top_k), ``tokens``, ``tokens_dropped``."""
        texts, _ = self._as_list(inputs)
        return [{"label": labels[0]["label"], "labels": labels, "tokens": tokens, "tokens_dropped": dropped}
                for labels, tokens, dropped in self._core.classify(texts, top_k)]


class FeatureExtractionPipeline(Pipeline):
    """``pipeline("feature-extraction")``: one vector per text, pooled as the model directory declares.
    A sparse (SPLADE) model (``output == "sparse"``) gives ``{"indices": int64 [k], "values": float32 [k]}``
    per text: its nonzero vocabulary weights, indices ascending. A multi-vector (ColBERT) model
    (``output == "multi_vector"``) gives a float32 array [kept tokens, dim] of unit vectors per text; ``query=True``
    encodes the texts as queries (docs/retrieval.md "Multi-vector embeddings")."""

    @property
    def output(self) -> str:
        """``"dense"``, ``"sparse"`` (a SpladePooling module or glassbox.json ``sparse``) or ``"multi_vector"``
        (PyLate's ColBERT layout or glassbox.json ``multi_vector``); see explain()."""
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
        return vectors[0] if single else vectors

    def details(self, inputs: Union[str, List[str]], prompt_name: Optional[str] = None,
                dimensions: Optional[int] = None) -> List[Dict[str, Any]]:
        """As ``glassbox embed`` prints per text: ``vector`` (list) or, sparse, ``indices`` and ``values``;
        ``tokens``, ``tokens_dropped``."""
        texts, _ = self._as_list(inputs)
        vectors, tokens, dropped = self._core.embed(texts, prompt_name, dimensions)
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
        return [float(self._core.similarity(vectors[0], v)) for v in vectors[1:]]


class TextRankingPipeline(Pipeline):
    """``pipeline("text-ranking")``: a cross-encoder (a text classifier with one label) scores (query, document)
    pairs, like sentence-transformers' ``CrossEncoder.rank``."""

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


def pipeline(task: str, model_dir: Optional[Union[str, "os.PathLike[str]"]] = None, *, threads: int = 0,
             opt_level: int = 2, truncation: Optional[str] = None,
             batch_size: Optional[int] = None,
             precision: Optional[str] = None,
             weights_cache: Optional[Union[str, "os.PathLike[str]"]] = None
             ) -> Union[TextClassificationPipeline, FeatureExtractionPipeline, "TextRankingPipeline",
                                 "SentenceSimilarityPipeline"]:
    """Loads a text or image pipeline, like ``transformers.pipeline(task, model=...)``.

    Image tasks: ``"image-classification"``, ``"image-feature-extraction"`` and ``"ocr"`` take a model
    directory (required) and ``threads``/``opt_level``; the other arguments are text settings.

    task: ``"text-classification"``, ``"feature-extraction"``, ``"sentence-similarity"`` (an embedding model,
    scores with its declared similarity function) or ``"text-ranking"`` (a cross-encoder: a
    classify model with one label); it must match the task the model
    directory declares (glassbox.json ``task``) or that is derived from it, else InvalidInput.
    model_dir: a directory in the Hugging Face Optimum layout; None: the embedded default model
    (models/langid, language identification; see default_model_dir()).
    threads (0: physical cores), opt_level, truncation (None: glassbox.json's, else an overlong
    input is an error; ``"none" | "longest_first" | "only_first" | "only_second"``) and batch_size
    (None: glassbox.json's, else 8) and precision (None: glassbox.json's, else fp32; ``"fp32" | "bf16" |
    "int8-dynamic"``) and weights_cache (None: glassbox.json's, else off; a directory where the packed
    weights are kept so later loads map them) are the same settings as ``glassbox classify`` flags.
    """
    if task in _VISION_TASKS:
        if model_dir is None:
            raise InvalidInput(f"pipeline({task!r}) needs a model directory (there is no embedded image model)")
        return _vision_pipeline(task, os.fspath(model_dir), threads, opt_level)
    if task not in _TASKS:
        raise InvalidInput(f"task {task!r} is not one of {sorted(list(_TASKS) + list(_VISION_TASKS))}")
    directory = default_model_dir() if model_dir is None else os.fspath(model_dir)
    cache = None if weights_cache is None else os.fspath(weights_cache)
    core = _glassbox._Pipeline(directory, threads, opt_level, truncation, batch_size, precision, cache)
    if core.task != _TASKS[task]:
        err = InvalidInput(f"{directory}: the model directory's task is '{core.task}', "
                           f"not '{_TASKS[task]}' as pipeline({task!r}) needs "
                           f"(fix: use pipeline({[k for k, v in _TASKS.items() if v == core.task][0]!r}) "
                           f"or set \"task\" in glassbox.json)")
        err.code, err.what, err.where = "invalid argument", "task mismatch", directory
        raise err
    cls = {"text-classification": TextClassificationPipeline, "feature-extraction": FeatureExtractionPipeline,
           "text-ranking": TextRankingPipeline, "sentence-similarity": SentenceSimilarityPipeline}[task]
    if cls is TextRankingPipeline and len(core.labels) != 1:
        err = InvalidInput(f"{directory}: pipeline('text-ranking') needs a cross-encoder with one logit per pair; "
                           f"this model has {len(core.labels)} labels (fix: use pipeline('text-classification'))")
        err.code, err.what, err.where = "invalid argument", "not a cross-encoder", directory
        raise err
    return cls(task, core)
