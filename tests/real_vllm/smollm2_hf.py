"""Turn the embedded SmolLM2-135M GGUF into two Hugging Face folders vLLM can serve (run with the vLLM
environment's Python: it needs torch, transformers and gguf; ``./dev test`` calls it).

vLLM's CPU build cannot read the Q4_1 GGUF, and transformers will not ``save_pretrained`` a model it loaded
quantized; so the GGUF is loaded dequantized, its weights are copied into a fresh ``LlamaForCausalLM`` made
from the same config without the quantization settings, and saved in bfloat16 with the tokenizer the GGUF
carries. The second folder is the same model with every MLP weight perturbed (seeded), so it answers
differently under the same architecture, tokenizer and chat template: a second checkpoint of one "run".

Usage: python smollm2_hf.py GGUF_FILE OUT_DIR   (writes OUT_DIR/base and OUT_DIR/perturbed, then
OUT_DIR/.complete; a folder that has .complete is left as it is).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

PERTURB_SEED = 20261202
PERTURB_SCALE = 0.25  # noise of this fraction of each MLP weight's own standard deviation


def convert(gguf: Path, out: Path) -> None:
    import torch
    from transformers import AutoConfig, AutoTokenizer, GgufConfig, LlamaForCausalLM

    folder, name = str(gguf.parent), gguf.name
    dequantized = GgufConfig(gguf_file=str(gguf), dequantize=True)
    loaded = LlamaForCausalLM.from_pretrained(
        folder, gguf_file=name, quantization_config=dequantized, dtype=torch.float32
    )
    weights = loaded.state_dict()
    config = AutoConfig.from_pretrained(folder, gguf_file=name)
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    for variant in ("base", "perturbed"):
        model = LlamaForCausalLM(config)
        missing, unexpected = model.load_state_dict(weights, strict=False)
        if unexpected or [key for key in missing if key != "lm_head.weight"]:
            raise SystemExit(f"weights do not match the config: missing {missing}, unexpected {unexpected}")
        if variant == "perturbed":
            perturb_mlp(model, torch)
        model = model.to(torch.bfloat16)
        target = partial / variant
        model.save_pretrained(target)
        tokenizer.save_pretrained(target)
    out.mkdir(parents=True, exist_ok=True)
    for variant in ("base", "perturbed"):
        shutil.rmtree(out / variant, ignore_errors=True)
        (partial / variant).rename(out / variant)
    partial.rmdir()
    (out / ".complete").write_text(f"{gguf}\n", encoding="utf-8")


def perturb_mlp(model: Any, torch: Any) -> None:
    """Seeded Gaussian noise on every MLP projection (another checkpoint, the same everything else)."""
    generator = torch.Generator().manual_seed(PERTURB_SEED)
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if ".mlp." in name:
                noise = torch.randn(weight.shape, generator=generator)
                weight.add_(noise * weight.std() * PERTURB_SCALE)


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    gguf, out = Path(sys.argv[1]), Path(sys.argv[2])
    if not (out / ".complete").is_file():
        convert(gguf, out)


if __name__ == "__main__":
    main()
