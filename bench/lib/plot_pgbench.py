"""Draws the `pgbench` suite's plots: tps against clients, both servers on
one plot, one PNG per workload and scale. Run by bench/suites/pgbench.py with
the Python of bench/.venv (matplotlib); reads a JSON spec on stdin:

    {"out_dir": DIR, "prefix": NAME, "series": [{"title": T, "file": F,
      "points": {"PostgreSQL": [[clients, tps|null], ...], "Scalegres": [...]}}]}

and prints the path of each PNG it wrote.
"""

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"PostgreSQL": {"color": "#336791", "marker": "o"},
         "Scalegres": {"color": "#d9534f", "marker": "s"}}


def main():
    spec = json.load(sys.stdin)
    os.makedirs(spec["out_dir"], exist_ok=True)
    for s in spec["series"]:
        fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
        drawn = 0
        for label, points in s["points"].items():
            pts = [(n, tps) for n, tps in points if tps]
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, label=label, linewidth=2, **STYLE.get(label, {}))
            drawn += 1
        if not drawn:
            plt.close(fig)
            continue
        clients = sorted({n for pts in s["points"].values() for n, _ in pts})
        if len(clients) > 1 and clients[-1] / max(clients[0], 1) >= 8:
            ax.set_xscale("log", base=2)
        ax.set_xticks(clients)
        ax.set_xticklabels([str(n) for n in clients])
        ax.set_xlabel("clients")
        ax.set_ylabel("transactions per second")
        ax.set_ylim(bottom=0)
        ax.set_title(s["title"])
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        path = os.path.join(spec["out_dir"], f"{spec['prefix']}-{s['file']}.png")
        fig.savefig(path)
        plt.close(fig)
        print(path)


if __name__ == "__main__":
    main()
