"""Model-directory preprocessing cases shared by the Pillow and transformers.js comparisons:
name -> (preprocessor_config.json or None, glassbox.json or None, resolved settings for the Python
reference). `resolved` spells out every value the way Python transformers applies it (class
defaults written out from transformers' source), independent of glassbox's own defaults table."""
IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
CLIP_MEAN, CLIP_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]
HALF = [0.5, 0.5, 0.5]


def _r(resize, resample, crop=None, mean=HALF, std=HALF, rescale=1 / 255, normalize=True, pad=None, letterbox=None):
    return dict(resize=resize, resample=resample, crop=crop, mean=mean, std=std, rescale=rescale,
                normalize=normalize, pad=pad, letterbox=letterbox)


CASES = {
    "vit": ({"image_processor_type": "ViTImageProcessor", "do_resize": True, "size": {"height": 224, "width": 224},
             "resample": 2, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
             "image_mean": HALF, "image_std": HALF}, None, _r(("hw", 224, 224), 2)),
    # every field left to ViTImageProcessor's defaults: 224x224 bilinear, mean/std 0.5
    "vit_class_defaults": ({"image_processor_type": "ViTImageProcessor"}, None, _r(("hw", 224, 224), 2)),
    "clip": ({"image_processor_type": "CLIPImageProcessor", "do_resize": True, "size": {"shortest_edge": 224},
              "resample": 3, "do_center_crop": True, "crop_size": {"height": 224, "width": 224}, "do_rescale": True,
              "rescale_factor": 0.00392156862745098, "do_normalize": True, "image_mean": CLIP_MEAN,
              "image_std": CLIP_STD, "do_convert_rgb": True},
             None, _r(("short", 224), 3, crop=(224, 224), mean=CLIP_MEAN, std=CLIP_STD)),
    # the legacy form (integers for size/crop_size, feature_extractor_type) of openai/clip-vit-base-patch32
    "clip_legacy": ({"feature_extractor_type": "CLIPFeatureExtractor", "size": 224, "crop_size": 224,
                     "do_center_crop": True, "resample": 3, "image_mean": CLIP_MEAN, "image_std": CLIP_STD},
                    None, _r(("short", 224), 3, crop=(224, 224), mean=CLIP_MEAN, std=CLIP_STD)),
    "convnext_crop_pct": ({"image_processor_type": "ConvNextImageProcessor", "size": {"shortest_edge": 224},
                           "crop_pct": 0.875, "resample": 3, "image_mean": IMAGENET_MEAN, "image_std": IMAGENET_STD},
                          None, _r(("convnext", 224, 0.875), 3, mean=IMAGENET_MEAN, std=IMAGENET_STD)),
    "convnext_384_squash": ({"image_processor_type": "ConvNextImageProcessor", "size": {"shortest_edge": 384}},
                            None, _r(("hw", 384, 384), 2, mean=IMAGENET_MEAN, std=IMAGENET_STD)),
    "siglip": ({"image_processor_type": "SiglipImageProcessor", "size": {"height": 224, "width": 224},
                "resample": 3, "image_mean": HALF, "image_std": HALF, "do_convert_rgb": None},
               None, _r(("hw", 224, 224), 3)),
    "deit": ({"image_processor_type": "DeiTImageProcessor", "size": {"height": 256, "width": 256}, "resample": 3,
              "do_center_crop": True, "crop_size": {"height": 224, "width": 224}, "image_mean": IMAGENET_MEAN,
              "image_std": IMAGENET_STD}, None,
             _r(("hw", 256, 256), 3, crop=(224, 224), mean=IMAGENET_MEAN, std=IMAGENET_STD)),
    "resnet_style_256_224": ({"image_processor_type": "BitImageProcessor", "size": {"shortest_edge": 256},
                              "resample": 2, "do_center_crop": True, "crop_size": {"height": 224, "width": 224},
                              "image_mean": IMAGENET_MEAN, "image_std": IMAGENET_STD}, None,
                             _r(("short", 256), 2, crop=(224, 224), mean=IMAGENET_MEAN, std=IMAGENET_STD)),
    "lanczos": ({"image_processor_type": "ViTImageProcessor", "size": {"height": 97, "width": 131}, "resample": 1},
                None, _r(("hw", 97, 131), 1)),
    "box": ({"image_processor_type": "ViTImageProcessor", "size": {"height": 64, "width": 64}, "resample": 4},
            None, _r(("hw", 64, 64), 4)),
    "hamming": ({"image_processor_type": "ViTImageProcessor", "size": {"height": 300, "width": 120}, "resample": 5},
                None, _r(("hw", 300, 120), 5)),
    "nearest": ({"image_processor_type": "ViTImageProcessor", "size": {"height": 61, "width": 250}, "resample": 0},
                None, _r(("hw", 61, 250), 0)),
    "crop_larger_than_image": ({"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 160},
                                "crop_size": {"height": 200, "width": 180}},
                               None, _r(("short", 160), 3, crop=(200, 180), mean=CLIP_MEAN, std=CLIP_STD)),
    "pad_no_normalize": ({"image_processor_type": "ViTImageProcessor", "size": {"height": 150, "width": 200},
                          "do_normalize": False, "do_pad": True, "pad_size": {"height": 160, "width": 224}},
                         None, _r(("hw", 150, 200), 2, normalize=False, pad=(160, 224))),
    # no resize: decoding, rescale and normalize alone (the two references must agree within 1/255)
    "no_resize": ({"image_processor_type": "ViTImageProcessor", "do_resize": False, "image_mean": IMAGENET_MEAN,
                   "image_std": IMAGENET_STD}, None, _r(None, 2, mean=IMAGENET_MEAN, std=IMAGENET_STD)),
    "letterbox_glassbox_json": (None, {"vision": {"image_processor_type": "ViTImageProcessor", "do_normalize": False,
                                                  "letterbox": {"height": 320, "width": 320, "fill": 114}}},
                                _r(None, 2, normalize=False, letterbox=(320, 320, 114))),
}


def explicit_config(pc, cfg):
    """pc with every resolved value written out: what transformers.js needs to do what Python does
    (its base ImageProcessor does not know the Python classes' defaults: do_normalize, size and
    do_center_crop left out mean "off" there)."""
    e = dict(pc)
    kind = cfg["resize"]
    e["do_resize"] = kind is not None
    if kind and kind[0] == "hw":
        e["size"] = {"height": kind[1], "width": kind[2]}
    elif kind and kind[0] == "short":
        e["size"] = {"shortest_edge": kind[1]}
    elif kind and kind[0] == "convnext":
        e["size"], e["crop_pct"] = {"shortest_edge": kind[1]}, kind[2]
    if "ConvNext" in str(pc.get("image_processor_type")) and kind and kind[0] == "hw":
        e["size"] = {"shortest_edge": kind[1]}  # ConvNeXt squashes at >= 384 itself
    e["resample"] = cfg["resample"]
    e["do_center_crop"] = cfg["crop"] is not None
    if cfg["crop"]:
        e["crop_size"] = {"height": cfg["crop"][0], "width": cfg["crop"][1]}
    e["do_rescale"], e["rescale_factor"] = True, cfg["rescale"]
    e["do_normalize"], e["image_mean"], e["image_std"] = cfg["normalize"], cfg["mean"], cfg["std"]
    if cfg["pad"]:
        e["do_pad"], e["pad_size"] = True, {"height": cfg["pad"][0], "width": cfg["pad"][1]}
    return e
