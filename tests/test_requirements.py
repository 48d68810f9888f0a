"""The requirement files agree: the GPU box gets the app's packages at the same versions, with the GPU
builds; the dev and Ray files add to the app's."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pins(name: str) -> dict[str, str]:
    out = {}
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            pkg, _, version = line.partition("==")
            out[pkg.split("[")[0].lower()] = version
    return out


def test_the_gpu_requirements_are_the_apps_with_faiss_gpu():
    app, gpu = pins("requirements.txt"), pins("requirements-gpu.txt")
    assert "faiss-cpu" not in gpu and gpu.pop("faiss-gpu") == app.pop("faiss-cpu")
    assert gpu == app  # torch pinned beside sentence-transformers, every other version the same


def test_dev_requirements_include_the_app_and_ray():
    lines = (ROOT / "requirements-dev.txt").read_text().splitlines()
    assert "-r requirements.txt" in lines and "-r requirements-ray.txt" in lines
    assert "ray" in pins("requirements-ray.txt")
