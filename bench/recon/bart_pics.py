#!/usr/bin/env python3
"""CPU times of `fieldft recon` and `bart pics` on the same BART-written dataset (issue 24, item 5).

usage: bart_pics.py FIELDFT [--size 256] [--coils 8] [--spokes 128] [--iters 30]
                            [--lambda 1e-2] [--threads 2] [--repeat 3] [--prec f]

The dataset, the two commands and the mapping of the regularisation are those of the CI
cross-check tests/cli/bart_pics_check.py (imported: one place): BART's radial Shepp-Logan k-space
(`bart traj -r`, `bart phantom -k -s C -t`) and its sensitivities (`bart phantom -S C`), solved by
CG with l2 regularisation and a fixed iteration count by both, with the same thread count
(OMP_NUM_THREADS and --threads). Each command is timed by wall clock as a whole process (reading,
set-up, solve, writing) --repeat times, alternating the two; the table gives min / median / max
and the agreement of the images (|x_bart - sqrt(V) x_fieldft| / |x_bart|). Standard library only.
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "cli"))
import bart_pics_check as bpc  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--coils", type=int, default=8)
    ap.add_argument("--spokes", type=int, default=128)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--lambda", dest="lam", type=float, default=1e-2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--prec", default="f", choices=["f", "d"])
    a = ap.parse_args()
    a.tool = os.path.abspath(a.tool)  # the commands run in a temporary directory
    with tempfile.TemporaryDirectory() as d:
        m, v, power = bpc.make_dataset(d, a.size, a.coils, a.spokes)
        lam_b = bpc.bart_lambda(a.lam, m, v, power)
        tb, tf, solve = [], [], []
        for _ in range(a.repeat):
            t, xb = bpc.bart_pics(d, lam_b, a.iters, a.threads)
            tb.append(t)
            t, j, xf = bpc.fieldft_recon(a.tool, d, a.size, a.lam, a.iters, a.threads, prec=a.prec)
            tf.append(t)
            solve.append(j["seconds"]["solve"])
        r = bpc.rel_diff(xb, xf, v)

    def row(name, ts):
        return "| %s | %.2f | %.2f | %.2f |" % (name, min(ts), statistics.median(ts), max(ts))

    print("%d^2, %d coils, %d spokes x %d samples = %d samples, CG %d iterations, lambda %g (bart -r %.4g), "
          "%d threads, %d runs each" % (a.size, a.coils, a.spokes, 2 * a.size, m, a.iters, a.lam, lam_b, a.threads,
                                        a.repeat))
    print("| command | min s | median s | max s |")
    print("|---|---|---|---|")
    print(row("bart pics -l2 -r %.4g -i %d -w 1 -t traj ksp maps x" % (lam_b, a.iters), tb))
    print(row("fieldft recon ksp --traj traj --maps maps.cfl --lambda %g --iters %d --prec %s" % (a.lam, a.iters,
                                                                                                  a.prec), tf))
    print(row("(fieldft's solve stage alone)", solve))
    print("|x_bart - sqrt(V) x_fieldft| / |x_bart| = %.3e" % r)


if __name__ == "__main__":
    main()
