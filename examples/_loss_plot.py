"""The demos' loss curves as a PNG, drawn by matplotlib when it is installed.

    save_loss_plot("out/gpt_loss.png", [("train", steps, losses), ("val", eval_steps, val_losses)],
                   title="GPT loss")

matplotlib is optional for the demos: without it save_loss_plot prints one line saying the picture is
skipped and returns False, and training results are unaffected.
"""

SIZE_INCHES, DPI = (7.2, 4.4), 100  # a 720 x 440 pixel picture
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red")


def save_loss_plot(path, curves, title, xlabel="step", ylabel="loss"):
    """Draw each (label, xs, ys) of `curves` as a line, save to `path`; False (and a notice) without matplotlib."""
    try:
        # Figure + the Agg canvas directly: no pyplot, so no GUI backend is looked for and no global figure
        # state is left behind in a headless run.
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        print(f"matplotlib is not installed: skipping the loss curve picture {path} (pip install matplotlib)")
        return False
    fig = Figure(figsize=SIZE_INCHES, dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for (label, xs, ys), colour in zip(curves, COLOURS):
        few_points = len(xs) <= 30  # sparse series (evaluations) get markers so single points show
        ax.plot(xs, ys, "o-" if few_points else "-", color=colour, label=label, linewidth=1.5, markersize=4)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, format="png")
    return True
