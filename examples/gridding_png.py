#!/usr/bin/env python3
"""Non-Cartesian MRI in a few lines of fieldft: sample a phantom on a radial k-space trajectory
(type 2 NUFFT), reconstruct it by gridding (the adjoint, a type 1 NUFFT of density-compensated
samples), and write phantom | reconstruction side by side as a PNG.

    python examples/gridding_png.py --size 256 --out gridding.png

Needs only numpy and fieldft; the PNG is written by the small zlib-based writer below. With
--cupy the data live on the GPU (cupy arrays) and never leave it until the PNG is written.
"""

import argparse
import struct
import sys
import zlib

import numpy as np

import fieldft


def phantom(n: int) -> np.ndarray:
    """A head-like phantom of ellipses (intensity, centre, half-axes, angle), image[row, col]."""
    ellipses = [(1.0, 0.0, 0.0, 0.69, 0.92, 0), (-0.8, 0.0, -0.0184, 0.6624, 0.874, 0),
                (-0.2, 0.22, 0.0, 0.11, 0.31, -18), (-0.2, -0.22, 0.0, 0.16, 0.41, 18),
                (0.1, 0.0, 0.35, 0.21, 0.25, 0), (0.1, 0.0, 0.1, 0.046, 0.046, 0),
                (0.1, -0.08, -0.605, 0.046, 0.023, 0), (0.1, 0.06, -0.605, 0.023, 0.046, 0)]
    coords = (np.arange(n) - n / 2 + 0.5) / (n / 2)
    row, col = np.meshgrid(-coords, coords, indexing="ij")  # row up, col right
    img = np.zeros((n, n))
    for a, x0, y0, ax, ay, deg in ellipses:
        t = np.deg2rad(deg)
        u = (col - x0) * np.cos(t) + (row - y0) * np.sin(t)
        v = -(col - x0) * np.sin(t) + (row - y0) * np.cos(t)
        img[(u / ax) ** 2 + (v / ay) ** 2 <= 1] += a
    return img


def radial_trajectory(n: int, spokes: int):
    """Radial spokes through the k-space centre, in radians (the NUFFT's 2π-periodic points):
    k (cycles per field of view) in [-n/2, n/2) maps to 2π k / n in [-π, π)."""
    readout = 2 * n
    r = (np.arange(readout) - readout / 2) / readout * 2 * np.pi
    angles = np.arange(spokes) * np.pi / spokes
    kr = np.outer(np.cos(angles), r).ravel()
    kc = np.outer(np.sin(angles), r).ravel()
    weights = np.abs(np.outer(np.ones(spokes), r).ravel())  # ramp: radial sample density ~ 1/|k|
    weights[weights == 0] = 0.25 * (2 * np.pi / readout)  # the centre sample covers a small disc
    return kr, kc, weights


def reconstruct(n=128, spokes=None, backend="auto", use_cupy=False, eps=1e-6):
    """Returns (phantom, gridding reconstruction scaled to it) as numpy arrays."""
    spokes = spokes or int(np.ceil(np.pi / 2 * n))  # Nyquist for radial sampling
    truth = phantom(n)
    kr, kc, w = radial_trajectory(n, spokes)
    xp = np
    if use_cupy:
        import cupy as xp
    kr, kc = xp.asarray(kr, dtype=xp.float32), xp.asarray(kc, dtype=xp.float32)
    w = xp.asarray(w, dtype=xp.float32)
    image = xp.asarray(truth, dtype=xp.complex64)

    # Acquisition: s_j = sum_k image[k] exp(-i k . x_j), one type 2 plan (x pairs with axis 0).
    acquire = fieldft.Plan(2, (n, n), eps=eps, backend=backend)
    acquire.setpts(kr, kc)
    samples = acquire.execute(image)

    # Gridding: the adjoint of the acquisition applied to density-compensated samples.
    grid = fieldft.Plan(1, (n, n), eps=eps, backend=backend)
    grid.setpts(kr, kc)
    recon = grid.execute(samples * w)

    recon = recon.get() if use_cupy else recon
    recon = np.abs(recon)
    recon *= np.vdot(recon, truth) / np.vdot(recon, recon)  # least-squares scale to the phantom
    return truth, recon


def write_png(path: str, gray: np.ndarray) -> None:
    """8-bit grayscale PNG: signature, IHDR, one zlib-compressed IDAT (filter 0 rows), IEND."""
    h, w = gray.shape
    raw = b"".join(b"\x00" + gray[i].astype(np.uint8).tobytes() for i in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)  # 8 bits, grayscale, no interlace
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
                + chunk(b"IEND", b""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=256, help="image size N (N x N)")
    ap.add_argument("--spokes", type=int, default=None, help="radial spokes (default: pi/2 N)")
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--cupy", action="store_true", help="keep the data on the GPU as cupy arrays")
    ap.add_argument("--out", default="gridding.png", help="PNG file to write")
    args = ap.parse_args(argv)

    truth, recon = reconstruct(args.size, args.spokes, args.backend, args.cupy)
    err = np.linalg.norm(recon - truth) / np.linalg.norm(truth)
    both = np.concatenate([truth, recon], axis=1)
    write_png(args.out, np.clip(both / truth.max(), 0, 1) * 255)
    print(f"fieldft {fieldft.__version__}: {args.size}x{args.size} phantom, radial gridding, "
          f"relative error {err:.3f}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
