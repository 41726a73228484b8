"""glassbox from Python: Hugging Face-identical tokenizers, an ONNX CPU engine and text pipelines,
with no hidden defaults. A thin binding over the C++ library (no second implementation).

    import glassbox
    tok = glassbox.Tokenizer.from_file("tokenizer.json")
    enc = tok.encode("Hello world")                      # .ids .tokens .offsets ...
    sess = glassbox.Session("model.onnx", threads=1)
    outs = sess.run({"input_ids": ids, "attention_mask": mask})   # dict of numpy arrays
    clf = glassbox.pipeline("text-classification")       # embedded language-id model
    clf("Guten Morgen")                                  # [{'label': 'de', 'score': ...}]
    gen = glassbox.pipeline("text-generation", "decoder_dir")
    gen("Once upon", max_new_tokens=20)                  # [{'generated_text': ..., 'policy': ...}]

Errors are typed (glassbox.InvalidInput, glassbox.ModelError, ...; see glassbox.errors).
"""

from ._glassbox import Encoding, GenerationSession, Session, TensorInfo, Tokenizer, physical_core_count
from ._pipeline import (FeatureExtractionPipeline, ImageClassificationPipeline, ImageFeatureExtractionPipeline,
                        ImagePipeline, OcrPipeline, Pipeline, SentenceSimilarityPipeline, TextClassificationPipeline,
                        TextGenerationPipeline, TextGenerationStream, TextRankingPipeline, default_model_dir, pipeline)
from .errors import (GlassboxError, InternalError, InvalidInput, IoError, LimitExceeded, ModelError, NotFound,
                     Unsupported)

from ._glassbox import __version__  # declared once, in CMakeLists.txt

__all__ = ["Tokenizer", "Encoding", "Session", "TensorInfo", "pipeline", "Pipeline", "TextClassificationPipeline",
           "FeatureExtractionPipeline", "TextRankingPipeline", "SentenceSimilarityPipeline", "ImagePipeline",
           "ImageClassificationPipeline", "ImageFeatureExtractionPipeline", "OcrPipeline", "default_model_dir",
           "GenerationSession", "TextGenerationPipeline", "TextGenerationStream",
           "physical_core_count",
           "GlassboxError", "InvalidInput", "NotFound", "ModelError", "Unsupported", "LimitExceeded", "IoError",
           "InternalError"]
