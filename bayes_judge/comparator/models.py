"""Loading judge models: a local transformers folder, a ``.gguf`` file, or a hub name.

Causal LMs (SmolLM2, Llama, Qwen, ...) and encoder-decoder LMs (FlanT5 style) are both supported;
which one a checkpoint is comes from its config (``is_encoder_decoder``). CPU and float32 by
default; CUDA with bfloat16 when a GPU is present and ``device="auto"``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["LoadedModel", "load_model"]


@dataclass
class LoadedModel:
    """A judge model ready for scoring.

    Attributes
    ----------
    model, tokenizer : the transformers objects (model in eval mode)
    is_seq2seq : True for encoder-decoder models (first decoder token is the answer)
    name : a short display name (folder or file name, or hub id)
    fingerprint : sha256 over the config and the weights' file names and sizes, and the dtype
        they were loaded in (``"-bfloat16"`` appended; nothing for float32); a store written by
        another fingerprint is refused unless asked
    max_length : the longest prompt (tokens) the model takes
    device : torch device string
    """

    model: Any
    tokenizer: Any
    is_seq2seq: bool
    name: str
    fingerprint: str
    max_length: int
    device: str
    info: dict = field(default_factory=dict)

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))


def _fingerprint(path: Path | None, name: str, config: Any, dtype: str = "float32") -> str:
    """sha256 over the name, the config and the weights' file names and sizes, plus the dtype the
    weights were loaded in: ``"-bfloat16"`` appended (another precision judges differently, and a
    store refuses it by name). float32 appends nothing, so that fingerprints taken before the dtype
    counted, all float32 on the CPU, still open their stores."""
    h = hashlib.sha256(name.encode())
    h.update(json.dumps(config.to_dict(), sort_keys=True, default=str).encode())
    if path is not None:
        files = [path] if path.is_file() else sorted(p for p in path.iterdir() if p.is_file())
        for f in files:
            h.update(f.name.encode() + str(f.stat().st_size).encode())
    return h.hexdigest()[:16] + ("" if dtype == "float32" else f"-{dtype}")


def _resolve_device(device: str, dtype: str | None):
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if dtype in (None, "auto"):
        dt = torch.bfloat16 if device.startswith("cuda") else torch.float32
    else:
        dt = getattr(torch, dtype) if isinstance(dtype, str) else dtype
    return device, dt


def load_model(model: str | os.PathLike | None = None, *, device: str = "auto",
               dtype: str | None = None, max_length: int | None = None) -> LoadedModel:
    """Load a judge model.

    Parameters
    ----------
    model : path or str, optional
        ``None``: the embedded default judge under ``models/`` (see
        :func:`bayes_judge.comparator.install.install_default_model`). A folder with a transformers
        ``config.json``; a ``.gguf`` file (loaded with ``gguf_file=``, de-quantized to float32);
        a folder holding exactly one ``.gguf`` file; or a hub name (needs network access and is
        tried last).
    device : ``"auto"`` (CUDA when available, else CPU), ``"cpu"``, ``"cuda"``, ``"cuda:1"``...
    dtype : torch dtype name; default float32 on CPU and bfloat16 on CUDA.
    max_length : cap on prompt tokens; default the model's ``max_position_embeddings`` (or the
        tokenizer's ``model_max_length`` for models with relative positions, e.g. T5: 512).

    Examples
    --------
    >>> from bayes_judge.comparator.models import load_model       # doctest: +SKIP
    >>> lm = load_model()                   # the embedded judge, float32 on the CPU  # doctest: +SKIP
    >>> lm = load_model("models/Qwen2.5-7B-Instruct", device="cuda")  # bfloat16      # doctest: +SKIP
    """
    from .install import DEFAULT_MODEL, default_model_path

    if model is None:
        path = default_model_path()
        name = DEFAULT_MODEL["name"]
    else:
        path = Path(model).expanduser()
        name = path.name
        if not path.exists():
            looks_like_hub = isinstance(model, str) and model.count("/") == 1 and not str(model).startswith((".", "/", "~"))
            if not looks_like_hub:
                raise FileNotFoundError(
                    f"model {str(model)!r} does not exist: give a local folder with a transformers "
                    "config.json, a .gguf file, or a hub name such as 'org/model'"
                )
            path, name = None, str(model)
    gguf_file = None
    if path is not None:
        if path.is_file():
            if path.suffix != ".gguf":
                raise ValueError(f"model file {path} is not a .gguf file; give a .gguf file or a model folder")
            gguf_file, folder = path.name, path.parent
        else:
            folder = path
            if not (folder / "config.json").is_file():
                ggufs = sorted(folder.glob("*.gguf"))
                if len(ggufs) == 1:
                    gguf_file = ggufs[0].name
                else:
                    raise ValueError(
                        f"{folder} is not a model: it has no config.json"
                        + (f" and {len(ggufs)} .gguf files (pass one file)" if ggufs else " and no .gguf file")
                    )
        source = str(folder)
    else:
        source = name
    dev, dt = _resolve_device(device, dtype)
    from .install import _quiet_transformers

    with _quiet_transformers():
        from transformers import (
            AutoConfig,
            AutoModelForCausalLM,
            AutoModelForSeq2SeqLM,
            AutoTokenizer,
        )

        kw: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
        try:
            config = AutoConfig.from_pretrained(source, **kw)
            tok = AutoTokenizer.from_pretrained(source, **kw)
            seq2seq = bool(getattr(config, "is_encoder_decoder", False))
            cls = AutoModelForSeq2SeqLM if seq2seq else AutoModelForCausalLM
            mdl = cls.from_pretrained(source, dtype=dt, **kw)
        except OSError as err:
            raise ValueError(f"could not load a model from {source!r}: {err}") from err
    mdl.to(dev)
    mdl.eval()
    if getattr(mdl, "hf_quantizer", None) is not None and gguf_file:
        mdl.hf_quantizer = None  # de-quantized already; keeps the object plain
    limit = getattr(config, "max_position_embeddings", None)
    tok_limit = getattr(tok, "model_max_length", None)
    if limit is None and tok_limit and tok_limit < 1_000_000:
        limit = tok_limit
    limit = int(max_length or limit or 2048)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    dtype_name = str(dt).replace("torch.", "")
    fp = _fingerprint(path if path is not None else None, name, config, dtype_name)
    return LoadedModel(
        model=mdl, tokenizer=tok, is_seq2seq=seq2seq, name=name, fingerprint=fp, max_length=limit,
        device=dev, info={"source": source, "gguf_file": gguf_file, "dtype": dtype_name},
    )
