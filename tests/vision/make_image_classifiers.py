#!/usr/bin/python3
"""Tiny image classifiers in Hugging Face directory layout, exported with torch 1.13's
torch.onnx.export (random weights, fixed seed), plus test images and the reference pixel tensors
(Pillow + transformers' arithmetic, pillow_parity_test.reference) for classify_peer_test.js.
  make_image_classifiers.py OUT_DIR  ->  prints {"models": {classifier: dir}, "embedders": {name: dir},
                                          "images": {name: path}, "reference": {model: {image: npy}}}
Models:
  resnet_nchw: ResNet-shaped (conv-bn-relu, residual block, global average pool, linear), input
    pixel_values [batch, 3, 32, 32]; CLIP-style preprocessing (shortest edge 40 bicubic, crop 32).
  vit_nhwc: ViT-shaped (patch embedding, one pre-norm attention block, mean pool), input
    pixel_values [batch, 32, 32, 3] (channels last); ViT preprocessing (32x32 bilinear), with
    multi_label_classification (sigmoid scores).
  clip_vision: a CLIP-style vision tower (CLIPVisionModelWithProjection's shape: patch embedding,
    class token, position embeddings, pre-layernorm, one pre-norm encoder layer with quick-GELU MLP,
    post-layernorm of the class token = pooler_output, visual projection = image_embeds), outputs
    image_embeds [batch, 8] and last_hidden_state [batch, 17, 16]; CLIP preprocessing (shortest edge
    40 bicubic, crop 32); config.json architectures ["CLIPVisionModelWithProjection"] (an embedder).
    Its reference tensors feed onnxruntime-node for embedding parity."""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_images import make_images  # noqa: E402
from pillow_parity_test import reference  # noqa: E402
from preprocess_cases import CLIP_MEAN, CLIP_STD, HALF, _r  # noqa: E402

LABELS = ["cat", "dog", "boat", "tree", "sky"]


class ResNetish(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, 2, 1), torch.nn.BatchNorm2d(8), torch.nn.ReLU())
        self.block = torch.nn.Sequential(torch.nn.Conv2d(8, 8, 3, 1, 1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                         torch.nn.Conv2d(8, 8, 3, 1, 1), torch.nn.BatchNorm2d(8))
        self.head = torch.nn.Linear(8, len(LABELS))

    def forward(self, pixel_values):
        x = self.stem(pixel_values)
        x = torch.relu(x + self.block(x))
        return self.head(x.mean(dim=(2, 3)))


class ViTish(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, 16, 8, 8)
        self.norm1 = torch.nn.LayerNorm(16)
        self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(16)
        self.head = torch.nn.Linear(16, len(LABELS))

    def forward(self, pixel_values):  # channels last
        x = self.patch(pixel_values.permute(0, 3, 1, 2)).flatten(2).transpose(1, 2)
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return self.head(self.norm2(x).mean(dim=1))


class ClipVisionish(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, 16, 8, 8, bias=False)
        self.cls = torch.nn.Parameter(torch.randn(16) * 0.5)
        self.pos = torch.nn.Parameter(torch.randn(17, 16) * 0.2)
        self.pre = torch.nn.LayerNorm(16)
        self.norm1 = torch.nn.LayerNorm(16)
        self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(16)
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)
        self.post = torch.nn.LayerNorm(16)
        self.proj = torch.nn.Linear(16, 8, bias=False)

    def forward(self, pixel_values):
        x = self.patch(pixel_values).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], 1, 16), x], dim=1) + self.pos
        x = self.pre(x)
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        h = self.fc1(self.norm2(x))
        x = x + self.fc2(h * torch.sigmoid(1.702 * h))
        return self.proj(self.post(x[:, 0])), x


def export_embedder(out_dir, preprocessor):
    os.makedirs(out_dir, exist_ok=True)
    model = ClipVisionish().eval()
    torch.onnx.export(model, (torch.rand(1, 3, 32, 32),), os.path.join(out_dir, "model.onnx"), input_names=["pixel_values"],
                      output_names=["image_embeds", "last_hidden_state"],
                      dynamic_axes={"pixel_values": {0: "batch"}, "image_embeds": {0: "batch"}, "last_hidden_state": {0: "batch"}},
                      opset_version=14, do_constant_folding=True)
    json.dump({"architectures": ["CLIPVisionModelWithProjection"], "model_type": "clip_vision_model", "hidden_size": 16,
               "projection_dim": 8}, open(os.path.join(out_dir, "config.json"), "w"), indent=1)
    json.dump(preprocessor, open(os.path.join(out_dir, "preprocessor_config.json"), "w"), indent=1)


def export(model, example, out_dir, preprocessor, config_extra=None):
    os.makedirs(out_dir, exist_ok=True)
    model.eval()
    for m in model.modules():  # non-trivial batch-norm statistics
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
    torch.onnx.export(model, (example,), os.path.join(out_dir, "model.onnx"), input_names=["pixel_values"],
                      output_names=["logits"], dynamic_axes={"pixel_values": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=14, do_constant_folding=True)
    config = {"id2label": {str(i): l for i, l in enumerate(LABELS)}, "label2id": {l: i for i, l in enumerate(LABELS)}}
    config.update(config_extra or {})
    json.dump(config, open(os.path.join(out_dir, "config.json"), "w"), indent=1)
    json.dump(preprocessor, open(os.path.join(out_dir, "preprocessor_config.json"), "w"), indent=1)


def main():
    out = sys.argv[1]
    torch.manual_seed(31)
    models = {"resnet_nchw": os.path.join(out, "resnet_nchw"), "vit_nhwc": os.path.join(out, "vit_nhwc"),
              "clip_vision": os.path.join(out, "clip_vision")}
    clip_pre = {"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 40}, "resample": 3,
                "do_center_crop": True, "crop_size": {"height": 32, "width": 32}, "do_rescale": True,
                "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": CLIP_MEAN, "image_std": CLIP_STD}
    export(ResNetish(), torch.rand(1, 3, 32, 32), models["resnet_nchw"], clip_pre)
    export(ViTish(), torch.rand(1, 32, 32, 3), models["vit_nhwc"],
           {"image_processor_type": "ViTImageProcessor", "size": {"height": 32, "width": 32}, "resample": 2,
            "image_mean": HALF, "image_std": HALF}, {"problem_type": "multi_label_classification"})
    export_embedder(models["clip_vision"], clip_pre)
    cfgs = {"resnet_nchw": _r(("short", 40), 3, crop=(32, 32), mean=CLIP_MEAN, std=CLIP_STD),
            "vit_nhwc": _r(("hw", 32, 32), 2),
            "clip_vision": _r(("short", 40), 3, crop=(32, 32), mean=CLIP_MEAN, std=CLIP_STD)}
    images = make_images(os.path.join(out, "img"))
    chosen = {k: images[k] for k in ["photo.jpg", "orient6.jpg", "palette.png", "rgba.webp", "wide.jpg"]}
    refs = {}
    for name, cfg in cfgs.items():
        refs[name] = {}
        for img, path in chosen.items():
            x = reference(path, cfg)
            if name == "vit_nhwc":
                x = x.transpose(0, 2, 3, 1)
            f = os.path.join(out, f"ref_{name}_{img}.npy")
            np.save(f, np.ascontiguousarray(x.astype(np.float32)))
            refs[name][img] = f
    embedders = {"clip_vision": models.pop("clip_vision")}
    print(json.dumps({"models": models, "embedders": embedders, "images": chosen, "reference": refs}))


if __name__ == "__main__":
    main()
