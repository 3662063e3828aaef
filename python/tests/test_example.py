"""The example script examples/gridding_png.py runs and writes a valid PNG of a reconstruction
that resembles its phantom."""

import importlib.util
import struct
import zlib
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gridding_png.py"


def load_example():
    spec = importlib.util.spec_from_file_location("gridding_png", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_png_gray(path):
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF
        chunks[tag] = chunks.get(tag, b"") + body
        pos += 12 + length
    w, h, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, color) == (8, 0) and b"IEND" in chunks
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(h, w + 1)
    assert not rows[:, 0].any()  # filter type 0 on every row
    return rows[:, 1:]


def test_example_writes_png_of_a_faithful_reconstruction(tmp_path, capsys):
    example = load_example()
    out = tmp_path / "gridding.png"
    assert example.main(["--size", "64", "--out", str(out), "--backend", "cpu"]) == 0
    assert "relative error" in capsys.readouterr().out
    img = read_png_gray(out)
    assert img.shape == (64, 128)  # phantom | reconstruction
    truth, recon = example.reconstruct(64, backend="cpu")
    err = np.linalg.norm(recon - truth) / np.linalg.norm(truth)
    # Gridding (ramp density compensation, Nyquist radial sampling) of this phantom measured
    # 0.19 at N = 64, its blur and streaks, not the NUFFT. Broken pipelines measured 0.79 (no
    # density compensation), 0.81 (wrong sign in the adjoint), 0.93 (swapped axes).
    assert err < 0.3
